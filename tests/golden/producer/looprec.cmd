# A recursion with a loop in each level: looprec(2.0, 2) (testdata/ir/looprec.ir)
# written by the test producer, which nests the calls and passes arguments
# as irt-trace does, gives the same answers from every tool: the print, a
# slice with control dependences through the calls, replays that diverge
# at a branch not taken (d = 1: the loop exits earlier, @18) and at one
# taken in the nested call (@28/@5), and the derivative (1 + 4 + 1 = 6).
. golden/common.sh
trace_both looprec 2.0 2
show 'irt-print -l 2 looprec.irt'
same 'irt-print looprec.irt'
same 'irt-check looprec.irt | grep -v -e ^producer -e ^bytes'
same 'irt-print --json looprec.irt | jq -S "del(.producer, .meta) | walk(if type == \"object\" then del(.line, .col) else . end)"'
irt-diff t/looprec.irt p/looprec.irt > /dev/null; echo "irt-diff: exit $?"
irt-diff t/looprec.irt p/looprec.irt | grep -v '^ '
show 'irt-slice --control --through-calls --list --backward @28/@12 looprec.irt'
same 'irt-slice --control --through-calls --list --backward @28/@12 looprec.irt'
same 'irt-slice --control --list --backward @28/@12 looprec.irt'
same 'irt-slice --control --through-calls --list --forward @3 looprec.irt'
same 'irt-replay --set @2=3.0 -o r.irt looprec.irt && irt-print r.irt'
show 'irt-replay --set @3=1 -o r.irt looprec.irt'
same 'irt-replay --set @3=1 -o r.irt looprec.irt'
show 'irt-replay --set @28/@4=true -o r.irt looprec.irt'
same 'irt-replay --set @28/@4=true -o r.irt looprec.irt'
show 'irt-grad looprec.irt'
same 'irt-grad looprec.irt'
same 'irt-grad --mode forward --tangent @2=1.0 looprec.irt'
