irt-replay --set @2 -o out.fb h.fb
