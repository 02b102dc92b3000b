make_bad_traces return-closes-wrong-call return-closes-wrong-call.fb && irt-check return-closes-wrong-call.fb
