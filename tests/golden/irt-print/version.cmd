irt-print --version
