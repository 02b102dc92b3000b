irt-check --help
