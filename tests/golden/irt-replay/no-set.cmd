irt-replay h.fb
