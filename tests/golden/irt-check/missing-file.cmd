irt-check missing.fb
