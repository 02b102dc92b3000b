# a 1.1 trace without control-flow facts for f: --control says so on stderr
# (its IR text is there, but no analysis reads branches from text)
make_bad_traces facts-missing t.fb
irt-slice -b @ -c --list t.fb
