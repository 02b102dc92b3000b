# forward mode: the directional derivative of the result
irt-trace testdata/ir/cossin.ir cs 0.7 -o cs.fb
irt-grad --mode forward --tangent @2=1.0 cs.fb
irt-grad --mode forward --tangent @2=2.0 --json cs.fb | jq -c .
irt-trace testdata/ir/geom.ir geom 1.0 0.5 --seed 3 | irt-grad --mode forward --tangent @2=1 --tangent @3=1.0
