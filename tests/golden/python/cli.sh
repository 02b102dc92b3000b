# Sourced by the python/cli-*.cmd cases: `python3` is Debian's interpreter
# with the built package importable (as the installed python3-irtrace is),
# also for the commands that onterminal.py runs; argparse wraps --help at
# 80 columns.
mkdir -p .py-bin
ln -sf /usr/bin/python3 .py-bin/python3
export PATH="$PWD/.py-bin:$PATH" COLUMNS=80
export PYTHONPATH="${IRT_BUILD:?the python cases need golden.py --build}/python"
