# c = cos(x); c + sin(c) at 0.7: -sin(x) (1 + cos(cos(x))) = -1.1090153626605397
# (a reverse pass in discovery order, as IRTracker's test AD does, gets this wrong)
irt-trace testdata/ir/cossin.ir cs 0.7 | irt-grad
python3 -c "import math; x = 0.7; print(repr(-math.sin(x) * (1 + math.cos(math.cos(x)))))"
