# golden: release-only
# W1-W4 of perf-baselines.md and the LSTM W5 traced from their IR (bench/ir/)
# and differentiated: value and gradient checksums against the reference
# figures (relative 1e-10 for W1-W3, 1e-9 for W4 and for W5, whose reference
# is PyTorch's); W1-W4 written in C++ with irt/record.h (bench/cpp/,
# irt-record-bench) recorded and checked the same way; and each trace
# differentiated three times in one process (irt-grad-bench), the later
# runs reusing the memory the first freed, with bit-identical results;
# and forward mode along all-ones, whose tangent is the sum of the
# gradient's elements, against the reference's sum
python3 "$IRT_SOURCE/bench/grad_bench.py" --bin "$(dirname "$(command -v irt-grad)")" --work . --check
