# the backward pass and the annotated trace are traces like any other:
# checked, sliced, rendered and diffed by the other tools
irt-trace testdata/ir/cossin.ir cs 0.7 -o cs.fb
irt-grad --emit-trace cs.fb -o grad.fb
irt-check grad.fb | tail -n 1
# what the gradient (the root's return) depends on
irt-slice --backward @13 --list grad.fb
irt-dot grad.fb -m adjoint_of > grad.dot && echo "irt-dot: $(grep -c 'adjoint_of' grad.dot) nodes labelled with adjoint_of"
dot -Tsvg grad.dot > grad.svg && echo "dot: rendered"
irt-grad --annotate cs.fb -o annotated.fb
echo "irt-dot: $(irt-dot annotated.fb -m adjoint | grep -c 'adjoint') nodes labelled with their adjoint"
irt-diff cs.fb annotated.fb > /dev/null; echo "irt-diff exit status $?"
