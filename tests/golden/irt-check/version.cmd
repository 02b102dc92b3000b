irt-check --version
