# a trace whose program failed: Error nodes close the calls
printf 'function g\n1: (%%1, %%2)\n  %%3 = Main.h(%%2)\n  return %%3\nend\nfunction h\n1: (%%1, %%2)\n  %%3 = div(%%2, 0)\n  return %%3\nend\n' > e.ir
irt-trace e.ir g 1 -o e.fb; irt-stats e.fb
