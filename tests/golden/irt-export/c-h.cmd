# Straight-line C11: one typed constant per node, the loop unrolled as
# recorded, the recorded exit branch a guard; IRT_MAIN adds a main().
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-export --c -o h.c h.fb
sed -n '/as the trace recorded/,$p' h.c
cc -std=c11 -Wall -Wextra -Werror -DIRT_MAIN -o h h.c -lm
./h 2.0 2; ./h 0.5 2; ./h 2.0 3; echo "status $?"
