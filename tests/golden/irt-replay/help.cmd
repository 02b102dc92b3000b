irt-replay --help
