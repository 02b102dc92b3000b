# golden: release-only
# a recursion 10^6 calls deep is traced, checked and printed at --levels 2
irt-trace testdata/ir/deep.ir deep -o deep.fb
irt-check deep.fb | grep -E 'nodes|depth'
irt-print --levels 2 deep.fb
irt-print --node @2/@6/@6/@6/@2 deep.fb
irt-print --node @2/@6/@6/@6 --levels 1 deep.fb
