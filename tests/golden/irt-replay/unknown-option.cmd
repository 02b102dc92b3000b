irt-replay --set @2=1.0 --frobnicate h.fb
