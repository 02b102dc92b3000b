# The generated C, compiled with cc and run at the recorded arguments,
# reproduces every value of the trace bit for bit (tests/export/check_c.py
# compiles it to print each value and compares them with irt-export
# --jsonl's): programs, a slice, the backward passes of irt-grad --emit-trace.
check() {  # check TRACE [REFERENCE ARGS...]: the code of TRACE against REFERENCE
  irt-export --c -o code.c "$1" && irt-export --jsonl -o ref.jsonl "${2:-$1}" &&
    /usr/bin/python3 "$IRT_SOURCE/tests/export/check_c.py" code.c ref.jsonl "${@:3}"
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
# A check that finds a difference says so.
check h.fb h.fb 2.5 4; echo "status $?"
