# A trace is never read from the keyboard. tests/tool_lists.py checks that
# every built tool is in the loop or named below with the reason why not.
# irt-trace is not here: it reads an IR module file, never standard input.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stdin --"
for tool in irt-print irt-check irt-slice irt-dot irt-stats irt-grad irt-replay irt-diff irt-export irt-convert; do
  case $tool in
    irt-slice) opt="-l -b @1" ;;
    irt-replay) opt="--set @2=3.0" ;;
    irt-diff) opt="h.fb" ;;
    irt-export) opt="--jsonl" ;;
    *) opt="" ;;
  esac
  $T $tool $opt - 2>&1
done
