# irt-check accepts the test producer's trace of h(2.0, 2) as irt-trace's:
# the summaries differ in the producer and in the size only (irt-trace also
# stores each function's IR text; the producer stores control-flow facts
# alone, so the text "Main.zero" is in irt-trace's file only).
. golden/common.sh
trace_both h 2.0 2
show 'irt-check h.irt'
diff <(irt-check t/h.irt) <(irt-check p/h.irt)
diff <(irt-check --json t/h.irt | jq -S 'del(.producer, .bytes)') \
     <(irt-check --json p/h.irt | jq -S 'del(.producer, .bytes)') && echo "--json: same but producer and bytes"
echo "IR text in irt-trace's: $(grep -a -c 'Main.zero' t/h.irt), in the producer's: $(grep -a -c 'Main.zero' p/h.irt)"
