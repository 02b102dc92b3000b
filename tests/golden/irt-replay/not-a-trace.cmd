irt-replay --set @2=1.0 testdata/ir/h.ir
