# A trace is never read from the keyboard.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stdin --"
for tool in irt-print irt-check irt-slice irt-dot irt-stats irt-grad irt-replay; do
  case $tool in irt-slice) opt="-l -b @1" ;; irt-replay) opt="--set @2=3.0" ;; *) opt="" ;; esac
  $T $tool $opt - 2>&1
done
