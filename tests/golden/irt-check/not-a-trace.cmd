printf 'this is a text file, not a trace\n' > notes.txt && irt-check notes.txt
