irt-slice -b @1 nope.fb
