irt-diff --frobnicate a.fb b.fb
