# a recursion without end stops at --max-call-depth (default 2000000) with a
# StackOverflowError, and its trace is complete and valid (a failed run)
printf 'function t\n1: (%%1, %%2)\n  %%3 = %%2 + 1.0\n  %%4 = Main.t(%%3)\n  return %%4\nend\n' > t.ir
irt-trace --max-call-depth 3 -o t.fb t.ir t 1.0
echo "exit $?"
irt-check t.fb | grep -E 'nodes|depth|ok'
irt-print --json t.fb | jq -c .meta
irt-print --levels 3 t.fb
