irt-trace --help
