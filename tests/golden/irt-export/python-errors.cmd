# What --python cannot write is an error naming the node, and nothing is
# written: tensors (not yet), runs that failed.
irt-trace testdata/ir/f.ir f '[1.0, 2.0]' | irt-export --python -o t.py; echo "status $?"
irt-trace -o e.fb testdata/ir/error.ir outer 0; echo "irt-trace status $?"
irt-export --python e.fb > e.py; echo "status $?"
wc -c < e.py
ls
