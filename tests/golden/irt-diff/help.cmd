irt-diff --help
