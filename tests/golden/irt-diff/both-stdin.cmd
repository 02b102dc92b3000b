irt-diff - -
