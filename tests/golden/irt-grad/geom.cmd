# geom(n, β) through recursion and stochastic branches: d/dn = 1 whatever the
# draws; β only decides branches (conditions carry no adjoint), so d/dβ = 0
irt-trace testdata/ir/geom.ir geom 1.0 0.5 --seed 3 -o g.fb
irt-print --levels 3 g.fb
irt-grad g.fb
irt-trace testdata/ir/geom.ir geom 1.5 0.2 --seed 11 | irt-grad --wrt @2
