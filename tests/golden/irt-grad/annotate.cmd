# the primal trace written back with each active node's adjoint as metadata
irt-trace testdata/ir/cossin.ir cs 0.7 | irt-grad --annotate -o a.fb
irt-print a.fb
irt-check a.fb | tail -n 1
irt-trace testdata/ir/geom.ir geom 1.0 0.5 --seed 3 | irt-grad --annotate | irt-print --levels 2
