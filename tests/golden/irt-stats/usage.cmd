irt-stats --help
