irt-slice --sideways @1 x.fb
