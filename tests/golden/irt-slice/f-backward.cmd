# the seed README's f(x) = sin(x) + x
irt-trace testdata/ir/f.ir f 1.0 | irt-slice -b @5 --list
irt-trace testdata/ir/f.ir f 1.0 | irt-slice -F @3 --list
