# What --python cannot write is an error naming the node, and nothing is
# written: operations it has no code for (digamma), runs that failed.
printf 'function d\n1: (%%1, %%2)\n  %%3 = Main.digamma(%%2)\n  return %%3\nend\n' > d.ir
irt-trace d.ir d '[1.0, 2.0]' | irt-export --python -o t.py; echo "status $?"
irt-trace -o e.fb testdata/ir/error.ir outer 0; echo "irt-trace status $?"
irt-export --python e.fb > e.py; echo "status $?"
wc -c < e.py
ls
