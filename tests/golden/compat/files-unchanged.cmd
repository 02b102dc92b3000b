# The committed v1 files are never regenerated: a newer irtrace must read them as they are.
cd testdata/compat/v1 && sha256sum *.fb
