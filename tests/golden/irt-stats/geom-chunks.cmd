# --chunks lists every chunk before the summary
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 -o geom.fb
irt-stats --chunks geom.fb
irt-stats --chunks --json geom.fb | jq -c .chunk_list
