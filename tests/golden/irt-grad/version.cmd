irt-grad --version
