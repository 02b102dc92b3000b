# geom(1, 0.5) with draws from seed 7, every level, random draws tagged
irt-trace --seed 7 --tag-random testdata/ir/geom.ir geom 1 0.5 | irt-print
