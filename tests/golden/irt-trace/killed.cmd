# A tool ended by SIGTERM or SIGHUP while writing -o FILE removes its
# temporary file: neither FILE nor FILE.tmpXXXXXX is left behind.
wait_for_temp() {
  for _ in $(seq 1000); do
    compgen -G "$1.tmp*" > /dev/null && return 0
    sleep 0.01
  done
  echo "no temporary file appeared"
}
irt-trace -o out.fb.zst testdata/ir/loop.ir powsum 0.5 1000000000000 &
pid=$!
wait_for_temp out.fb.zst
kill -TERM $pid
{ wait $pid; } 2> /dev/null; echo "status $?"
echo "files left: $(ls | grep -c '^out')"
irt-trace -o out.fb testdata/ir/loop.ir powsum 0.5 1000000000000 &
pid=$!
wait_for_temp out.fb
kill -HUP $pid
{ wait $pid; } 2> /dev/null; echo "status $?"
echo "files left: $(ls | grep -c '^out')"
