# --control on a 1.1 trace reads the control-flow facts: the same slices as
# from the IR text of a 1.0 file (compat/geom-slice-control)
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.6012629994179048,0.7477740925472398,0.10301998939503632 --tag-random -o geom.fb
irt-slice -b @8/@8/@6 -t -c --list geom.fb
irt-slice -F @4 -c --list geom.fb
