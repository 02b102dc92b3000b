echo hello > x.fb && irt-stats x.fb
