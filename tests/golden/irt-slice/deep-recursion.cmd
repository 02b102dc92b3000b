# golden: release-only
# a recursion 10^6 calls deep: sliced across all levels, with control, both ways
irt-trace testdata/ir/deep.ir deep -o deep.fb
irt-slice -v -b @3 --through-calls --control deep.fb -o b.fb
irt-check b.fb | grep -E 'nodes|depth'
irt-slice -v -F @2/@2 --through-calls deep.fb -o f.fb
irt-check f.fb | grep -E 'nodes|depth'
irt-slice -b @2/@6/@6/@5 --through-calls --list deep.fb
