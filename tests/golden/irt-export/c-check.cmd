# golden: release-only
# (It checks the generated code's values, compiled by cc, which a sanitizer
# does not see, over a hundred tool runs that double its time there; the
# trace fuzzer exports every format under ASan.)
# The generated C, compiled with cc and run at the recorded arguments,
# reproduces every value of the trace bit for bit (tests/export/check_c.py
# compiles it to print each value and compares them with irt-export
# --jsonl's): programs, a slice, the backward passes of irt-grad --emit-trace.
check() {  # check TRACE [REFERENCE ARGS...]: the code of TRACE against REFERENCE
  irt-export --c -o code.c "$1" && irt-export --jsonl -o ref.jsonl "${2:-$1}" &&
    /usr/bin/python3 "$IRT_SOURCE/tests/export/check_c.py" $TOL code.c ref.jsonl "${@:3}"
}
irt-trace -o h.fb testdata/ir/h.ir h 2.4 4 && check h.fb
irt-trace -o p.fb testdata/ir/prims.ir prims 0.5 3 --seed 1 && check p.fb
irt-trace -o cs.fb testdata/ir/cossin.ir cs 0.7 && check cs.fb
irt-trace -o lr.fb testdata/ir/looprec.ir looprec 2.0 3 && check lr.fb
irt-trace -o f32.fb testdata/ir/f.ir f 1.5f0 && check f32.fb
irt-trace -o p32.fb testdata/ir/prims.ir prims 0.3f0 3 --seed 1 && check p32.fb
# The integer divisions, powers, min/max and signs at the edges: negative
# operands, wrap-around, zeros of both signs, infinities, NaN, Float32.
for a in "-7 2 -7.5 2.0" "4611686018427387905 3 1e300 -1e-300" "-9223372036854775807 5 Inf 0.0" \
         "3 1 NaN -2.5" "-9 4 -0.0 3.0" "-8 3 1e-320 -3.0" "-7 2 -7.5f0 2.0f0" "5 3 1.0f-30 -0.3f0"; do
  irt-trace -o divs.fb testdata/ir/divs.ir divs $a && check divs.fb
done
irt-slice --backward @26 h.fb > slice.fb && check slice.fb
irt-grad --emit-trace cs.fb > gcs.fb && check gcs.fb
irt-grad --emit-trace h.fb > gh.fb && check gh.fb
irt-grad --emit-trace lr.fb > glr.fb && check glr.fb
# At other arguments, what irt-replay computes, where the replay does not
# diverge; where it does, the code stops at the same branch.
irt-replay --set @2=3.0 h.fb > h3.fb && check h.fb h3.fb 3.0 4
irt-replay --set @2=-0.5 lr.fb > lr2.fb && check lr.fb lr2.fb -0.5 3
irt-replay --set @2=0.3 gh.fb > gh3.fb && check gh.fb gh3.fb 0.3 4
irt-replay --set @3=5 h.fb 2>&1; echo "status $?"
check h.fb h.fb 2.4 5 2>&1 | tail -1
# Block 1 may name its arguments in any order (legal IR): the k-th is
# parameter k whatever its name, here at other arguments than recorded.
printf 'function sw\n1: (%%1, %%3, %%2)\n  %%4 = %%3 - %%2\n  %%5 = %%4 / %%2\n  return %%5\nend\n' > sw.ir
irt-trace -o sw.fb sw.ir sw 10.0 4.0 && irt-replay --set @2=7.0 sw.fb > sw7.fb && check sw.fb sw7.fb 7.0 4.0
# Tensors: a small perceptron (matrix times vector, broadcasting, tanh, a
# transpose, reductions, indexing), its backward pass (which returns a
# tuple), a slice; the tensor operations, with sums whose order of additions
# (Eigen's, vectorized) shows, for two sets of arguments.
W="[0.5 -0.25 0.75 0.125; -1.0 0.3 0.2 0.9; 0.1 0.7 -0.6 0.4]"
irt-trace -o m.fb testdata/ir/mlp.ir mlp "$W" "[0.1, -0.2, 0.3]" "[1.5, -0.5, 0.25, 2.0]" && check m.fb
irt-grad --emit-trace m.fb > gm.fb && check gm.fb
irt-slice --backward @17 m.fb > sm.fb && check sm.fb
# Python's slices (getslice, nothing for a part left out) and their
# adjoints (ungetslice).
irt-trace -o sl.fb testdata/ir/slices.ir sl "$W" "[1.5, -0.5, 0.25, 2.0]" && check sl.fb
irt-grad --emit-trace sl.fb > gsl.fb && check gsl.fb
# Tuples joined (cat of tuples, Python's t1 + t2), and their adjoints item
# by item; the function is named sum (the code names it sum_ in Python).
irt-trace -o tc.fb testdata/ir/tuplecat.ir sum 1.5 3 && check tc.fb
irt-grad --emit-trace tc.fb > gtc.fb && check gtc.fb
# A vector of a tuple's numbers (collect), and its backward pass.
irt-trace -o co.fb testdata/ir/collect.ir vec 1.5 3 && check co.fb
irt-grad --emit-trace co.fb > gco.fb && check gco.fb
for step in 1.7 1.3; do
  mapfile -t A < <(/usr/bin/python3 "$IRT_SOURCE/tests/export/tensor_args.py" --step $step 7x5 5 9x6f32)
  irt-trace -o t.fb testdata/ir/tensorops.ir tops "${A[@]}" && check t.fb
done
# At another input vector, what irt-replay computes (tensor arguments in
# irt-trace's notation):
irt-replay --set @4="[0.5, 1.0, -2.0, 0.25]" m.fb > m2.fb &&
  check m.fb m2.fb "$W" "[0.1, -0.2, 0.3]" "[0.5, 1.0, -2.0, 0.25]"
irt-replay --set @4="[0.5, 1.0, -2.0, 0.25]" gm.fb > gm2.fb &&
  check gm.fb gm2.fb "$W" "[0.1, -0.2, 0.3]" "[0.5, 1.0, -2.0, 0.25]"
# Matrix products of matrices: libtrace's kernel adds in an order of its own
# choosing (see irt-export(1)), so these compare within 64 machine epsilons.
mapfile -t A < <(/usr/bin/python3 "$IRT_SOURCE/tests/export/tensor_args.py" 12x8 8x6)
printf 'function mm\n1: (%%1, %%2, %%3)\n  %%4 = Main.matmul(%%2, %%3)\n  %%5 = Main.tanh(%%4)\n  return %%5\nend\n' > mm.ir
irt-trace -o mm.fb mm.ir mm "${A[@]}" && TOL="--tolerance 64" check mm.fb
# A check that finds a difference says so.
check h.fb h.fb 2.5 4; echo "status $?"
