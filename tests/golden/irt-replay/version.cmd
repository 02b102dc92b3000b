irt-replay --version
