irt-print - < /dev/null
