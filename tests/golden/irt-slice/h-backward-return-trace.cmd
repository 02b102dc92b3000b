# the same slice as a trace: renumbered, valid, printable
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice --backward @26 h.fb -o s.fb
irt-check s.fb | grep -v bytes
irt-print s.fb
