# h's return: exactly the seed's backward(@26), plus @26, in the seed's numbering
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice --backward @26 --list h.fb
