irt-trace --version
