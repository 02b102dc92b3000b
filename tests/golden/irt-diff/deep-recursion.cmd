# golden: release-only
# two traces 10^6 calls deep, compared without recursion
irt-trace -o deep.fb testdata/ir/deep.ir deep
irt-diff --stat deep.fb deep.fb | grep -E 'matched|same'
