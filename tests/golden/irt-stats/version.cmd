irt-stats --version
