# Tensor shapes computed from data are checked before anything is allocated:
# at most 2^28 elements (a matrix product of two empty matrices included).
# An empty tensor counts its zero dimensions as 1 for that bound, so that no
# product of some of its dimensions can overflow: 2^31×0 is refused.
cat > t.ir <<'IR'
function mm
1: (%1, %2, %3)
  %4 = Main.matmul(%2, %3)
  return %4
end
function z
1: (%1)
  %2 = Main.zeros(100000, 100000)
  return %2
end
function fl
1: (%1, %2)
  %3 = Main.fill(%2, 1048575, 1048575)
  return %3
end
function bc
1: (%1)
  %2 = Main.ones(100000, 1)
  %3 = Main.ones(1, 100000)
  %4 = %2 + %3
  return %4
end
IR
irt-trace -o mm.fb t.ir mm "2147483648×0 Float64[]" "0×2147483648 Float64[]"; echo "status $?"
irt-trace -o mm.fb t.ir mm "32768×0 Float64[]" "0×32768 Float64[]"; echo "status $?"
irt-check -q mm.fb && irt-print mm.fb | tail -1
irt-trace -o z.fb t.ir z; echo "status $?"
irt-trace -o fl.fb t.ir fl 1.0; echo "status $?"
irt-trace -o bc.fb t.ir bc; echo "status $?"
