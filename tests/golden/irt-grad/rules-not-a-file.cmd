# rule files must be regular files: devices and pipes are refused at once
irt-trace -o f.fb testdata/ir/f.ir f 1.0
irt-grad --rules /dev/zero f.fb; echo "status $?"
IRT_RULES=/dev/urandom irt-grad f.fb; echo "status $?"
mkfifo fifo
irt-grad --no-default-rules --rules fifo f.fb; echo "status $?"
