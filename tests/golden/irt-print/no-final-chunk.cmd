make_bad_traces no-final-chunk no-final-chunk.fb && irt-print no-final-chunk.fb
