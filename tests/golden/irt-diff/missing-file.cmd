irt-diff missing.fb other.fb
