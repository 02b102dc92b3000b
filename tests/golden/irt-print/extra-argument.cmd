irt-print a.fb b.fb
