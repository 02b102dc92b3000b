# Reverse and forward derivatives through the operations the standard set
# added (tests/opset_test.cc checks every one against central differences)
cat > d.ir <<'IR'
function f
1: (%1, %2, %3)
  %4 = Main.atan2(%2, %3)
  %5 = Main.log1p(%4)
  %6 = Main.expm1(%3)
  %7 = Main.lgamma(%2)
  %8 = Main.mod(%6, 0.7)
  %9 = %5 + %7
  %10 = %9 * %8
  return %10
end

function g
1: (%1, %2, %3)
  %4 = Main.min(%2, %3)
  %5 = Main.maximum(%4, 2)
  %6 = Main.slice(%2, 2, 1, 3, 2)
  %7 = Main.cat(2, %5, %6)
  %8 = Main.abs(%7)
  %9 = Main.sum(%8)
  return %9
end
IR
irt-trace -o f.fb d.ir f 1.5 0.8
irt-grad f.fb
irt-grad --mode forward --tangent @2=1.0 f.fb
irt-grad --mode forward --tangent @3=1.0 f.fb
irt-trace -o g.fb d.ir g '[1.0 -2.0 3.0; 4.0 5.0 -6.0]' '[0.5 0.5 0.5; 0.5 0.5 0.5]'
irt-grad g.fb
irt-grad --mode forward --tangent @2='[1.0 0.0 0.0; 0.0 0.0 1.0]' g.fb
