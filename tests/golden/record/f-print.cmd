# f(x) = sin(x) + x written in C++ records the seed's listing exactly, with
# the C++ source position of each node in JSON; irt-trace's trace of the
# seed's IR compares equal to it (producers and metadata aside).
. golden/common.sh
record f 1.0
mkdir -p t && irt-trace -o t/f.irt testdata/ir/cpp/f.ir f 1.0
show 'irt-print f.irt'
show 'irt-print --json f.irt | jq -c "[.. | objects | select(.line?) | {id, line, col}]"'
show 'irt-print --json f.irt | jq -c ".producer, .meta"'
same 'irt-print --no-meta f.irt'
irt-diff t/f.irt p/f.irt; echo "irt-diff: exit $?"
# To standard output, through a pipe.
"$R" f 0.5 -o - | irt-print -l 1
