irt-slice --help
