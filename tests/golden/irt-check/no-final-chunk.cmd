make_bad_traces no-final-chunk no-final-chunk.fb && irt-check no-final-chunk.fb
