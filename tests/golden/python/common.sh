# Sourced by the python/*.cmd cases: `py CODE` runs Debian's python3 with
# the built package and golden/seed.py importable.
py() {
  PYTHONPATH="${IRT_BUILD:?the python cases need golden.py --build}/python:golden" \
    /usr/bin/python3 -c "import irtrace, random, seed
$1"
}
