irt-slice --version
