# Tensor values in a listed slice: whole by default (0: never abbreviate),
# abbreviated past --max-elements N, metadata left out with --no-meta
cat > t.ir <<'IR'
function t
1: (%1, %2, %3)
  %4 = Main.matmul(%2, %3)
  %5 = Main.tanh(%4)
  %6 = Main.sum(%5)
  return %6
end
IR
irt-trace -o t.fb t.ir t "[0.1 0.2 0.3; 0.4 0.5 0.6]" "[1.0 -1.0; 0.5 2.0; -0.25 0.75]"
irt-slice --list -b @ t.fb
irt-slice --list --max-elements 3 -b @5 t.fb
irt-slice --list --max-elements 3 --no-meta -F @3 t.fb
