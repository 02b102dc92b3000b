# The seed's h loop, h(2.0, 2), written by the test producer through the
# public writer API, without IR text, prints as irt-trace's trace of
# testdata/ir/h.ir does: same nodes, classes, blocks and branch positions.
# In JSON they differ only in what the producer knows: its name, its trace
# metadata and the source lines and columns (the producer has no source).
. golden/common.sh
trace_both h 2.0 2
show 'irt-print h.irt'
same 'irt-print h.irt'
same 'irt-print --no-meta -l 1 h.irt'
same 'irt-stats h.irt | grep -v -e ^producer -e ^bytes -e ^chunks'
unsourced='del(.producer, .meta) | walk(if type == "object" then del(.line, .col) else . end)'
same 'irt-print --json h.irt | jq -S "$unsourced"'
# The rest of the JSON: what differs, and nothing else.
diff <(irt-print --json t/h.irt | jq -S '{producer, meta}') \
     <(irt-print --json p/h.irt | jq -S '{producer, meta}')
irt-diff t/h.irt p/h.irt; echo "irt-diff: exit $?"
