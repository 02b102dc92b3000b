: > empty.fb && irt-print empty.fb
