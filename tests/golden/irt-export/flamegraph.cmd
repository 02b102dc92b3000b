# docs/flamegraph.py draws --speedscope output: fib(12) makes 465 calls,
# each one box (plus the background), labelled where wide enough; levels
# deeper than --max-depth are left out and counted in the title.
irt-trace -o fib.fb testdata/ir/fib.ir fib 12
irt-export --speedscope fib.fb > fib.json
/usr/bin/python3 "$IRT_SOURCE/docs/flamegraph.py" --min-width 0 fib.json > fib.svg
grep -c '<rect' fib.svg
sed -n 3p fib.svg
grep -o '<title>[^<]*</title>' fib.svg | sed -n '1,3p'
/usr/bin/python3 "$IRT_SOURCE/docs/flamegraph.py" --max-depth 3 --min-width 0 fib.json | grep -c '<rect'
/usr/bin/python3 "$IRT_SOURCE/docs/flamegraph.py" --max-depth 3 fib.json | sed -n 3p
echo '{"shared":{"frames":[]},"profiles":[{"type":"sampled"}]}' | /usr/bin/python3 "$IRT_SOURCE/docs/flamegraph.py"
echo "exit $?"
