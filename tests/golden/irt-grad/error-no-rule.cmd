# a primitive without a rule in a differentiable position (here geom itself,
# recorded as a primitive below the depth limit) is an error naming it and the node
irt-trace testdata/ir/geom.ir geom 1.0 0.5 --seed 3 --max-depth 2 | irt-grad
