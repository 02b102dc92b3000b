irt-dot --version
