# The seed's geom recursion in C++: rand() from a seeded std::mt19937_64
# (recorded, tagged random = "uniform" with the context's tag_random),
# `if (IRT_IF(c)) return ...;` and a nested call per level. irt-trace
# replays the same draws (--rand-values) through the equivalent IR
# (testdata/ir/cpp/geom.ir) into a trace that compares equal.
. golden/common.sh
record geom 1 0.5 7 --tag-random
show 'irt-print geom.irt'
show 'irt-check geom.irt | grep -v ^bytes'
draws=$(irt-print --json p/geom.irt | jq -r '[.. | objects | select(.op == "rand") | .value] | join(",")')
echo "draws: $draws"
mkdir -p t && irt-trace --tag-random --rand-values "$draws" -o t/geom.irt testdata/ir/cpp/geom.ir geom 1 0.5
same 'irt-print --no-meta geom.irt'
irt-diff t/geom.irt p/geom.irt; echo "irt-diff: exit $?"
same 'irt-slice --control --backward @10 --list geom.irt'
same 'irt-replay --set @3=0.9 -o r.irt geom.irt; echo $?'
