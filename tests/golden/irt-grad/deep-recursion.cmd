# golden: release-only
# a recursion 10^6 calls deep: no recursion in the tool, both modes
irt-trace testdata/ir/graddeep.ir deep 0.3 -o d.fb
irt-grad d.fb
irt-grad --mode forward --tangent @2=1.0 d.fb
python3 -c "
import math
v, dv = 0.3, 1.0
for k in range(1000000):
    dv = 0.5 * math.cos(v) * dv + 1.0
    v = math.sin(v) * 0.5 + 0.3
print(repr(dv))"
