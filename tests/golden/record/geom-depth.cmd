# A depth limit: with max_depth 2 the root's calls to geom are recorded as
# one Primitive node each (their bodies still run: the result is the same
# as without the limit).
. golden/common.sh
record geom 1 0.5 7 --max-depth 2
show 'irt-print geom.irt'
