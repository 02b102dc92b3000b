# a 1.1 trace whose function carries control-flow facts checks; so does one
# without them (facts are optional, tools that need them warn)
make_bad_traces facts-valid t.fb && irt-check t.fb
make_bad_traces facts-missing m.fb && irt-check -q m.fb && echo "no facts: valid"
