#!/usr/bin/env bash
# Sets irtrace up on a Debian 12 machine: installs the Debian packages it
# needs (as root with apt-get, unless IRT_NO_INSTALL is set), builds the
# tools in build-release/bin/, and runs the example from the README: trace
# testdata/ir/geom.ir's geom(1, 0.5) and print the trace.
#
#   ./setup.sh          IRT_JOBS sets the build's parallel jobs (default: all cores)
set -euo pipefail
cd "$(dirname "$0")"

if [[ -z ${IRT_NO_INSTALL:-} ]]; then
  .ci/install-deps --if-needed
fi
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build-release -j "${IRT_JOBS:-$(nproc)}"

bin=build-release/bin
echo
echo "\$ $bin/irt-trace testdata/ir/geom.ir geom 1 0.5 | $bin/irt-print"
"$bin/irt-trace" testdata/ir/geom.ir geom 1 0.5 | "$bin/irt-print"
echo
echo "The tools are in $bin/; their man pages: man -l man/irt-print.1"
