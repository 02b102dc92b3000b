irt-print missing.fb
