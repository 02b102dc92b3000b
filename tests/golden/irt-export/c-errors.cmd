# What --c cannot write is an error naming the node, and nothing is written:
# operations it has no code for (digamma), failed runs. A run it can write:
irt-trace -o g.fb --seed 7 --tag-random testdata/ir/geom.ir geom 1 0.5
irt-export --c g.fb | grep -c IRT_VALUE
printf 'function d\n1: (%%1, %%2)\n  %%3 = Main.digamma(%%2)\n  return %%3\nend\n' > d.ir
irt-trace d.ir d '[1.0, 2.0]' | irt-export --c -o t.c; echo "status $?"
irt-trace -o e.fb testdata/ir/error.ir outer 0; echo "irt-trace status $?"
irt-export --c -o e.c e.fb; echo "status $?"
ls
