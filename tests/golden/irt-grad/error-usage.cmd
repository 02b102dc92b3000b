# usage errors exit 2
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --mode sideways f.fb
irt-grad --wrt 2x f.fb
irt-grad --tangent @2=1.0 f.fb
irt-grad --mode forward f.fb
irt-grad --seed "[1.0" f.fb
irt-grad --emit-trace --annotate f.fb
