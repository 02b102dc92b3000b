# an IR module must be a regular file: devices and pipes are refused at once
irt-trace /dev/zero f 1.0; echo "status $?"
irt-trace /dev/urandom f 1.0; echo "status $?"
mkfifo fifo
irt-trace fifo f 1.0; echo "status $?"
irt-trace testdata/ir f 1.0; echo "status $?"
# and at most 64 MiB
truncate -s 65M big.ir
irt-trace big.ir f 1.0; echo "status $?"
