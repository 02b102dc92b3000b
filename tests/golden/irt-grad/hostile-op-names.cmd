# Names from a trace are shown escaped and cut: a newline and ESC cannot
# forge lines or colours, bytes that are not UTF-8 show as \xNN, a 100000-byte
# name is cut to 1024 bytes. Each error is one line.
for v in op-forge op-utf8 op-long; do
  make_bad_traces $v $v.fb && irt-grad $v.fb; echo "status $?"
done
irt-grad op-long.fb 2>&1 | wc -c
