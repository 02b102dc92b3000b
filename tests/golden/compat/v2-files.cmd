# The committed format 1.1 and 2.0 files (irt-convert of the 1.0 ones) are
# never regenerated: a newer irtrace must read them as they are.
cd testdata/compat && sha256sum v1.1/*.fb v2/*.fb && cd ../..
for v in v1 v1.1 v2; do
  irt-check testdata/compat/$v/geom.fb | grep format
  irt-print testdata/compat/$v/geom.fb | md5sum
  irt-grad testdata/compat/$v/h.fb | md5sum
done
