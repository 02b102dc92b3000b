irt-print --help
