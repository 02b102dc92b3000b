irt-stats nope.fb
