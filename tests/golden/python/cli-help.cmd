# golden: release-only
# (The Python package is built in the release build only.)
# python3 -m irtrace --help, trace --help and --version, exit status 0.
. golden/cli.sh
python3 -m irtrace --help; echo "status $?"
python3 -m irtrace trace --help; echo "status $?"
python3 -m irtrace --version; echo "status $?"
python3 -m irtrace trace --version; echo "status $?"
