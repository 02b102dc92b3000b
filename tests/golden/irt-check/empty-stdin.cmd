irt-check - < /dev/null
