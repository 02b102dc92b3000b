# Straight-line Python: one assignment per node, the nested call inlined,
# the recorded branch a guard, random draws as drawn. (The prelude that
# gives each operation libtrace's meaning is left out here.)
irt-trace -o geom.fb --seed 7 testdata/ir/geom.ir geom 1 0.5
irt-export --python -o geom.py geom.fb
sed -n '/^def geom/,$p' geom.py
/usr/bin/python3 geom.py 1 0.5
/usr/bin/python3 geom.py 5 0.5
# Another β sends the first draw the other way: the guard says where.
/usr/bin/python3 geom.py 1 0.8 2>&1 | tail -1
