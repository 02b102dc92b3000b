make_bad_traces base-depth base-depth.fb && irt-check base-depth.fb
