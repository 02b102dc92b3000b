# irt-print --json and irt-grad --json write the same value as the same text
# (raw output, no jq to normalise it): Int64 as an integer (2), Float64 with
# a "." or an exponent (2.0, 3.0), Float32 with its own shortest digits
# (1.5, 2.497495), NaN as the string "NaN".
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-trace testdata/ir/f.ir f 1.5f0 -o f32.fb
irt-trace testdata/ir/f.ir f NaN -o nan.fb
for t in h f32 nan; do
  irt-print --json --levels 1 $t.fb
  irt-grad --json $t.fb
done
# the root call's value, as each tool writes it
value() { grep -o '"value":[^,]*' | head -n 1; }
for t in h f32 nan; do
  echo "$t: irt-print $(irt-print --json --levels 1 $t.fb | value), irt-grad $(irt-grad --json $t.fb | value)"
done
