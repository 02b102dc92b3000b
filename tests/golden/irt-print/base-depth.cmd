# a wrong base_depth is refused by every tool, as irt-check refuses it
make_bad_traces base-depth base-depth.fb && irt-print base-depth.fb
