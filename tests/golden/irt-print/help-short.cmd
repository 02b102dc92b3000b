irt-print -h
