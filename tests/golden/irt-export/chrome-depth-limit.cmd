# Perfetto keeps slices 512 deep: down(511) is 512 calls deep and fits,
# down(512) does not, and nothing is written (not even with -o).
irt-trace -o ok.fb testdata/ir/deep.ir down 511
irt-export --chrome-trace -o ok.json ok.fb
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" chrome ok.json
irt-trace -o deep.fb testdata/ir/deep.ir down 512
irt-export --chrome-trace deep.fb; echo "status $?"
irt-trace testdata/ir/deep.ir down 512 | irt-export --chrome-trace -o out.json; echo "status $?"
ls
