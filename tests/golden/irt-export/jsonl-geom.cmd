# One object per node in execution order: paths, parents, references by id,
# a conditional jump's condition, the Return that closes each call, metadata.
irt-trace --seed 7 --tag-random testdata/ir/geom.ir geom 1 0.5 | irt-export --jsonl
