# --control on a trace that carries no control-flow facts for a function (here the
# backward pass irt-grad --emit-trace writes) says on stderr what it cannot add
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-grad --emit-trace -o g.fb f.fb
irt-slice -b @ -t -c --list g.fb
