printf '' | irt-print
