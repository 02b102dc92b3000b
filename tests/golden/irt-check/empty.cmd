: > empty.fb && irt-check empty.fb
