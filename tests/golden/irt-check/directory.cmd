mkdir dir && irt-check dir
