# the seed's h at (2.0, 2) = 1 + x: dh/dx = 1.0; n (an Int) is not differentiable
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-grad h.fb
