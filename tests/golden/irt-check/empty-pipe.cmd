printf '' | irt-check
