printf 'hello\n' > hello.txt && irt-check hello.txt
