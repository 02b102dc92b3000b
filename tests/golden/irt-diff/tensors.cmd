# tensors are compared element by element; the largest difference is shown
cat > t.ir <<'IR'
function t
1: (%1, %2)
  %3 = %2 * 2.0
  return %3
end
IR
irt-trace -o a.fb t.ir t '[1.0 2.0 3.0; 4.0 5.0 6.0]'
irt-trace -o b.fb t.ir t '[1.0 2.0 3.5; 4.0 5.0 5.0]'
irt-diff --ignore-meta args a.fb b.fb
