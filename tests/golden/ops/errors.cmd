# Errors of the operations the standard set added: one line each, in one
# of Julia's categories, naming the operation (irt-ops(7))
cat > e.ir <<'IR'
function e
1: (%1, %2, %3)
  %4 = Main.atan2(%2, %3)
  return %4
end
IR
irt-trace e.ir e '"a"' 1.0 > /dev/null
irt-trace e.ir e '[1.0, 2.0]' '[1.0, 2.0, 3.0]' > /dev/null
cat > f.ir <<'IR'
function f
1: (%1, %2)
  %3 = Main.fld(%2, 0)
  return %3
end

function s
1: (%1, %2)
  %3 = Main.slice(%2, 1, 2, 4)
  return %3
end

function c
1: (%1, %2)
  %3 = Main.cat(2, %2, [1.0, 2.0, 3.0])
  return %3
end

function m
1: (%1, %2)
  %3 = Main.maximum(%2, 1)
  return %3
end

function t
1: (%1, %2)
  %3 = Main.getindex(%2, 3)
  return %3
end

function p
1: (%1, %2)
  %3 = Main.polygamma(%2)
  return %3
end
IR
irt-trace f.ir f 7 > /dev/null
irt-trace f.ir s '[1.0, 2.0, 3.0]' > /dev/null
irt-trace f.ir c '[1.0 2.0]' > /dev/null
irt-trace f.ir m 'Float64[]' > /dev/null
irt-trace f.ir t '(1, 2)' > /dev/null
irt-trace f.ir p 1.0 > /dev/null
echo "exit $?"
