# the seed's f(x) = sin(x) + x at 1.0: cos(1) + 1
irt-trace testdata/ir/f.ir f 1.0 | irt-grad
