irt-diff --version
