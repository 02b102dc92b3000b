# 30 tuples sharing items by index describe a value of 2^30 leaves: refused
# by the checker exactly as by every reader.
make_bad_traces tuple-bomb bomb.fb && wc -c < bomb.fb && irt-check bomb.fb
