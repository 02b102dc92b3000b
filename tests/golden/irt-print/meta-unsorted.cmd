make_bad_traces meta-unsorted meta-unsorted.fb && irt-print meta-unsorted.fb
