# track(DepthLimitContext(2), geom, 1, 0.5) of the seed README: the first draw
# is the seed's, the others make the primitive geom(2, 0.5) return 4
irt-trace --max-depth 2 --rand-values 0.933407016129252,0.7,0.8,0.2 testdata/ir/geom.ir geom 1 0.5 | irt-print --levels 2
