make_bad_traces meta-unsorted meta-unsorted.fb && irt-check meta-unsorted.fb
