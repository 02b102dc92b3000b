# An error in the middle of a long call body (the sweep builds a node's name
# only when it reports an error) names the node whose rule failed and the
# node it adds into; 400 tensor operations, a tanh at the 201st
python3 - <<'EOF2'
lines = ["function long", "1: (%1, %2)"]
for i in range(400):
    op = "tanh" if i == 200 else "sin"
    lines.append(f"  %{i + 3} = Main.{op}(%{i + 2})")
lines += ["  %403 = Main.sum(%402)", "  return %403", "end"]
open("long.ir", "w").write("\n".join(lines) + "\n")
EOF2
irt-trace long.ir long "[0.5, 0.25]" -o long.fb
irt-grad --json --max-elements 1 long.fb > /dev/null
echo "exit $?"
cat > tanh.rules <<EOF2
tanh(x) -> y
  dx = sum(dy)
EOF2
irt-grad --rules tanh.rules long.fb
echo "exit $?"
cat > sum.rules <<EOF2
sum(x) -> y
  dx = dy
EOF2
irt-grad --rules sum.rules long.fb
echo "exit $?"
