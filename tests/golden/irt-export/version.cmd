irt-export --version
