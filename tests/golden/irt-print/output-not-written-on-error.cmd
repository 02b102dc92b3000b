make_bad_traces flip-node-class t.fb && irt-print -o out.txt t.fb; s=$?; ls out.txt* 2>/dev/null; exit $s
