# the same run as written by another producer (the producer's name is
# rewritten in place, keeping its length): content is compared, the
# producers are only reported
irt-trace -o a.fb testdata/ir/h.ir h 2.0 2
python3 -c 'd = open("a.fb", "rb").read(); open("b.fb", "wb").write(d.replace(b"irt-trace", b"other-gen"))'
irt-check b.fb | grep producer
irt-diff a.fb b.fb; echo "exit $?"
irt-diff --stat a.fb b.fb | head -2
