# The operations the standard set added, on scalars, tensors and tuples,
# as irt-trace records them and irt-print shows them (irt-ops(7))
cat > new.ir <<'IR'
function scalars
1: (%1, %2, %3)
  %4 = Main.atan(%2)
  %5 = Main.atan2(%2, %3)
  %6 = Main.log1p(1.0e-10)
  %7 = Main.expm1(1.0e-10)
  %8 = Main.lgamma(%3)
  %9 = Main.digamma(1.0)
  %10 = Main.polygamma(1, 1.0)
  %11 = Main.fld(-7, 2)
  %12 = Main.mod(-7, 2)
  %13 = Main.div(-7, 2)
  %14 = Main.rem(-7, 2)
  %15 = Main.mod(-7.5, 2.0)
  %16 = Main.log(-1.0)
  %17 = Main.sqrt(-0.0)
  %18 = (1, "a", 2.5)
  %19 = Main.getindex(%18, 2)
  %20 = Main.length(%18)
  return %5
end

function tensors
1: (%1, %2, %3)
  %4 = Main.min(%2, %3)
  %5 = Main.max(%2, 0.5)
  %6 = Main.abs(%3)
  %7 = Main.sign(%3)
  %8 = %2 < %3
  %9 = Main.ifelse(%8, %2, %3)
  %10 = Main.maximum(%2)
  %11 = Main.minimum(%2, 1)
  %12 = Main.slice(%2, 2, 3, 1, -2)
  %13 = Main.cat(1, %2, %3)
  %14 = Main.reshape(%2, 6)
  %15 = Main.getindex(%14, 5)
  %16 = Main.getindex(%2, 5)
  %17 = Int64[7, -7]
  %18 = Main.fld(%17, 2)
  %19 = %17 * 3
  %20 = Main.sum(%17)
  return %13
end
IR
irt-trace new.ir scalars 0.5 -2.0 | irt-print
irt-trace new.ir tensors '[1.0 2.0 3.0; 4.0 5.0 6.0]' '[0.5 -2.5 7.0; 4.0 -0.5 9.0]' | irt-print
