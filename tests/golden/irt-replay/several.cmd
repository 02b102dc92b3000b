# several changes at once, in any order
irt-trace -o h.fb testdata/ir/h.ir h 2.0 3
irt-replay -v --set @15=10.0 --set @2=1.5 h.fb | irt-print | sed -n '1,3p;13,17p;27,36p'
