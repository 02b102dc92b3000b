# Malformed IR: the message says FILE:LINE:COL and what is wrong; exit 1
irt-trace nosuch.ir f 1.0; echo "status $?"
printf 'function f\n1: (%%1, %%2)\n  %%3 = sin(%%2\n  return %%3\nend\n' > a.ir
irt-trace a.ir f 1.0; echo "status $?"
printf 'function f\n1: (%%1, %%2)\n  %%3 = sin(%%9)\n  return %%3\nend\n' > b.ir
irt-trace b.ir f 1.0; echo "status $?"
printf 'function f\n1: (%%1, %%2)\n  br 7\nend\n' > c.ir
irt-trace c.ir f 1.0; echo "status $?"
printf 'function f\n1: (%%1, %%2)\n  %%3 = sin(%%2)\n' > d.ir
irt-trace d.ir f 1.0; echo "status $?"
printf '\x00\xff\xfe garbage\n' > e.ir
irt-trace e.ir f 1.0; echo "status $?"
