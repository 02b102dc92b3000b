irt-check a.fb b.fb
