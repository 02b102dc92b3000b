# --histogram: a bar of '#' after each operation's count and each depth's
# nodes, the largest row of each table 40 characters long.
irt-trace -o lr.fb testdata/ir/looprec.ir looprec 2.0 6
irt-stats --histogram lr.fb
# Text only: --json has no bars.
irt-stats --histogram --json lr.fb; echo "status $?"
