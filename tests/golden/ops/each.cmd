# Every operation the standard set added, one at a time: its value, its
# reverse and forward derivatives (tests/opset_test.cc checks them against
# central differences), and an error
one() {  # NAME CALL ARGS...: CALL over %2 (and %3); $WRT: the arguments with a tangent
  local name=$1 call=$2
  shift 2
  local params="%1, %2" tangents
  if (($# == 2)); then params="%1, %2, %3"; fi
  for a in ${WRT:-$(seq 2 $(($# + 1)))}; do tangents+=" --tangent @$a=1.0"; done
  printf 'function f\n1: (%s)\n  %%9 = %s\n  return %%9\nend\n' "$params" "$call" > f.ir
  echo "== $name"
  irt-trace -o f.fb f.ir f "$@" && irt-print f.fb | sed -n 's/^  @[0-9]*: \[§1:%9\] /value: /p'
  irt-grad --seed 1.0 f.fb | sed -n 's/.*\(@[0-9]*\): .* ∂ = /reverse \1: /p'
  irt-grad --mode forward $tangents f.fb | sed -n 's/^  ∂ = /forward: /p'
  irt-trace f.ir f '"x"' ${2:+1.0} > /dev/null
}
for f in atan log1p expm1 lgamma digamma sinh cosh asin acos asinh atanh log2 log10 exp2 cbrt erf erfc; do
  one $f "Main.$f(%2)" 0.6
done
one acosh "Main.acosh(%2)" 1.6
one polygamma "Main.polygamma(1, %2)" 0.6
for f in atan2 hypot mod rem; do
  one $f "Main.$f(%2, %3)" 0.6 -1.7
done
one fld "Main.fld(%2, %3)" 7.5 -2.0
one min "Main.min(%2, %3)" '[0.5, 2.0]' '[1.0, 1.0]'
one max "Main.max(%2, %3)" '[0.5, 2.0]' '[1.0, 1.0]'
one abs "Main.abs(%2)" '[0.5, -2.0]'
WRT=3 one ifelse "Main.ifelse(%2, %3, 0.5)" '[true, false]' '[1.5, 2.0]'
one maximum "Main.maximum(%2)" '[0.5, 2.0, -1.0]'
one minimum "Main.minimum(%2, 2)" '[0.5 2.0; -1.0 3.0]'
one slice "Main.slice(%2, 1, 3, 1, -2)" '[0.5, 2.0, -1.0]'
one unslice "Main.unslice(%2, %3, 1, 1, 3, 2)" '[0.5, 2.0]' '[0.0, 0.0, 0.0]'
one getslice "Main.getslice(%2, 1, -1, nothing, -2)" '[0.5, 2.0, -1.0]'
one ungetslice "Main.ungetslice(%2, %3, 1, nothing, nothing, 2)" '[0.5, 2.0]' '[0.0, 0.0, 0.0]'
one cat "Main.cat(1, %2, %3)" '[0.5, 2.0]' '[-1.0]'
