# the backward pass as a trace, differentiated again: d²h/dx² at (2.4, 4)
# = 2 + 6x = 16.4 (h = 1 + x + x² + x³)
irt-trace testdata/ir/h.ir h 2.4 4 | irt-grad --emit-trace | irt-grad
python3 -c "print(2 + 6 * 2.4)"
# and the third: 6
irt-trace testdata/ir/h.ir h 2.4 4 | irt-grad --emit-trace | irt-grad --emit-trace | irt-grad
