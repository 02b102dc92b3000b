irt-diff a.fb
