irt-dot --help
