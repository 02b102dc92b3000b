# An operation outside the standard set (frobnicate, the test producer's
# own: frobnicate(x) = 2x + 1) is allowed in a trace: it is recorded by
# name, printed, checked, sliced and counted. Tools that must evaluate or
# differentiate it stop with an error naming the operation and the node.
. golden/common.sh
mkdir -p p
"$P" -o p/frob.irt frob 2.0
show 'irt-print frob.irt'
show 'irt-check frob.irt'
show 'irt-slice --control --list --backward @4 frob.irt'
show 'irt-stats frob.irt | grep -e frobnicate -e status'
show 'irt-replay --set @2=3.0 -o r.irt frob.irt'
show 'irt-grad frob.irt'
show 'irt-grad --mode forward --tangent @2=1.0 frob.irt'
# Only the nodes that depend on it need it: @4 alone replays (@3 is not redone).
show 'irt-replay --set @3=1.0 -o r.irt frob.irt && irt-print r.irt'
# A rule for it (--rules) is all irt-grad needs: d/dx (2x + 1) x = 4x + 1 = 9.
printf 'frobnicate(x) -> y\n  dy = 2.0 * dx\n  dx = 2.0 * dy\n' > p/frob.rules
show 'irt-grad --rules frob.rules frob.irt'
show 'irt-grad --rules frob.rules --mode forward --tangent @2=1.0 frob.irt'
