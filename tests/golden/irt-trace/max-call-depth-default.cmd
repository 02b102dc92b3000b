# golden: release-only
# a recursion without end stops at the default call depth, 2000000, in under 1 GB
printf 'function t\n1: (%%1, %%2)\n  %%3 = %%2 + 1.0\n  %%4 = Main.t(%%3)\n  return %%4\nend\n' > t.ir
irt-trace -o /dev/null t.ir t 1.0
echo "exit $?"
