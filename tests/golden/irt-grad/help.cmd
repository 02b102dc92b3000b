irt-grad --help
