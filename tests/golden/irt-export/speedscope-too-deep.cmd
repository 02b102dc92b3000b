# Deeper than --max-depth: an error, and nothing written.
irt-trace -o deep.fb testdata/ir/deep.ir down 100
irt-export --speedscope --max-depth 100 deep.fb; echo "status $?"
irt-export --speedscope --max-depth 101 deep.fb | jq -c '.profiles[0].endValue'
irt-export --speedscope --max-depth 100 -o out.json deep.fb; echo "status $?"
ls
