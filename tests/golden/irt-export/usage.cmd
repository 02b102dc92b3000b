irt-export --help
