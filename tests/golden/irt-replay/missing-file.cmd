irt-replay --set @2=1.0 missing.fb
