irt-check -h
