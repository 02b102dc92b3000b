mkdir dir && irt-print dir
