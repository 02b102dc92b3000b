# What --python cannot write is an error naming the node, and nothing is
# written: operations it has no code for (digamma), runs that failed.
printf 'function d\n1: (%%1, %%2)\n  %%3 = Main.digamma(%%2)\n  return %%3\nend\n' > d.ir
irt-trace d.ir d '[1.0, 2.0]' | irt-export --python -o t.py; echo "status $?"
irt-trace -o e.fb testdata/ir/error.ir outer 0; echo "irt-trace status $?"
irt-export --python e.fb > e.py; echo "status $?"
wc -c < e.py
# A slice that dropped some of the root's arguments places the others by
# their names (%k is parameter k - 1); one that cannot be placed so is
# refused, not guessed.
printf 'function g\n1: (%%1, %%2, %%9)\n  %%4 = %%9 * %%9\n  return %%4\nend\n' > g.ir
irt-trace -o g.fb g.ir g 1.0 2.0 && irt-slice --backward @4 g.fb | irt-export --python -o g.py; echo "status $?"
ls
