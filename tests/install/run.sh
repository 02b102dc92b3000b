#!/usr/bin/env bash
# test.sh's install phase: irtrace as an outside project sees it.
#
#   tests/install/run.sh BUILD_DIR
#
# Installs BUILD_DIR (a built release tree) into a temporary prefix, builds
# the example programs of tests/install/ against it through the CMake
# package (static and shared library) and through pkg-config, and checks
# what they print against what the installed tools say about the same
# traces; then runs the installed tools themselves (irt-grad must find its
# rules with no environment variable) and, when the build has it, the
# installed Python package with Debian's /usr/bin/python3. As root with
# CI=true (a throwaway machine) it also builds the .deb files with cpack,
# installs them with apt-get, checks man, irt-grad, the examples and the
# Python package under /usr, and removes them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
work=$build/install-test
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
export TMPDIR=$work
unset IRT_RULES

fail() {
  echo "install: $*" >&2
  exit 1
}
step() { printf -- '-- %s\n' "$*"; }

# The example programs, each NAME built from NAME.cc by tests/install's
# CMake project as NAME_VARIANT for each of its variants, and checked by
# check_NAME BINARY.
examples=(reader recorder)
declare -A variants=([reader]="static shared" [recorder]="static")

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/irt-print bin/irt-grad lib/libirtrace.a lib/libirtrace.so include/irt/trace.h \
  include/irt/irtrace_generated.h share/irtrace/irtrace.fbs share/irtrace/default.rules \
  share/man/man1/irt-print.1 share/man/man7/irt-ops.7 \
  share/bash-completion/completions/irt-print lib/cmake/irtrace/irtrace-config.cmake \
  lib/pkgconfig/irtrace.pc; do
  [[ -e $prefix/$f ]] || fail "cmake --install did not install $f"
done
# Every installed tool has its man page and its completion file.
for tool in "$prefix"/bin/irt-*; do
  name=$(basename "$tool")
  [[ -e $prefix/share/man/man1/$name.1 ]] || fail "no man page installed for $name"
  [[ -e $prefix/share/bash-completion/completions/$name ]] || fail "no completion for $name"
  bash -c "source '$prefix/share/bash-completion/completions/$name' && complete -p $name" \
    >/dev/null || fail "the completion file for $name does not complete it"
done

# Traces made by the installed irt-trace: nested calls and a loop.
traces=("$work/geom.fb" "$work/h.fb")
"$prefix/bin/irt-trace" --rand-values 0.9,0.7,0.1 -o "$work/geom.fb" \
  "$root/testdata/ir/geom.ir" geom 1 0.5
"$prefix/bin/irt-trace" -o "$work/h.fb" "$root/testdata/ir/h.ir" h 2.0 3

# What the reader must print, from the installed tools: the result from
# irt-print's first line, the counts from irt-check --json, the root body
# from irt-print --levels 2 without its indentation.
expected_reader() {  # TRACE
  "$prefix/bin/irt-print" --levels 1 "$1" | sed -n '1s/.* → /result: /p'
  "$prefix/bin/irt-check" --json "$1" |
    jq -r '"nodes: \(.nodes)\ncalls: \(.calls)\nmax depth: \(.max_depth)"'
  "$prefix/bin/irt-print" --levels 2 "$1" | tail -n +2 | sed 's/^  //'
}
check_reader() {  # BINARY
  local t
  for t in "${traces[@]}"; do
    "$1" "$t" >"$work/out.txt" || fail "$1 $t failed"
    expected_reader "$t" >"$work/expected.txt"
    diff -u "$work/expected.txt" "$work/out.txt" || fail "$(basename "$1") on $(basename "$t")"
  done
}

# The recorder records model(x, n, k) = k x^2 + (n - k) sin(x), with calls,
# a loop and a branch; the installed tools check its trace, print it and
# differentiate it: d/dx = 2 k x + (n - k) cos(x), computed here by python3.
check_recorder() {  # BINARY
  local t=$work/recorded.fb y
  y=$("$1" 0.5 5 2 "$t") || fail "$1 failed"
  "$prefix/bin/irt-check" "$t" >"$work/check.txt" || { cat "$work/check.txt"; fail "irt-check $t"; }
  grep -qx "calls:     3" "$work/check.txt" || { cat "$work/check.txt"; fail "recorded calls"; }
  "$prefix/bin/irt-print" --levels 1 "$t" | grep -qF "⟨model⟩(⟨0.5⟩, ⟨5⟩, ⟨2⟩, ()...) → $y::Float64" ||
    fail "irt-print does not show the recorded result $y"
  "$prefix/bin/irt-print" --levels 2 "$t" | grep -qF "goto §2 (⟨0⟩, ⟨0.0⟩)" ||
    fail "irt-print does not show the loop's entry jump"
  (cd / && "$prefix/bin/irt-grad" --json "$t") >"$work/grad.json" || fail "irt-grad $t"
  python3 - "$y" "$work/grad.json" <<'PY' || fail "recorded value or gradient wrong"
import json, math, sys
x, n, k = 0.5, 5, 2
y = float(sys.argv[1])
d = json.load(open(sys.argv[2]))["derivatives"][0]["derivative"]
want_y = k * x * x + (n - k) * math.sin(x)
want_d = 2 * k * x + (n - k) * math.cos(x)
ok = abs(y - want_y) <= 1e-12 * abs(want_y) and abs(d - want_d) <= 1e-12 * abs(want_d)
print(f"recorder: y = {y!r} (analytic {want_y!r}), dy/dx = {d!r} (analytic {want_d!r})")
sys.exit(0 if ok else 1)
PY
}

# The Python package in DIR (PYTHONPATH holds DIR when it is given):
# /usr/bin/python3 imports it from there, records and reads a function,
# differentiates it with the installed rules, and `python3 -m irtrace
# trace` records the same trace. Runs from / so that nothing of the build
# or the source tree is on the path.
has_python=0
[[ -d $build/python/irtrace ]] && has_python=1
check_python() {  # DIR [PYTHONPATH_DIR]
  local dir=$1 path=${2:-}
  mkdir -p "$work/py"
  cat >"$work/py/pyprog.py" <<'PY'
import math


def f(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x) * x
    return s + x
PY
  (cd / && PYTHONPATH=${path:+$path:}$work/py /usr/bin/python3 - "$dir" "$work/py" <<'PY') ||
import math, os, sys
import irtrace, pyprog
here = os.path.join(sys.argv[1], "irtrace")
assert os.path.dirname(irtrace.__file__) == here, irtrace.__file__
assert irtrace._RULES == os.path.join(here, "default.rules") and os.path.isfile(irtrace._RULES)
out = os.path.join(sys.argv[2], "py.fb")
t = irtrace.track(pyprog.f, 0.5, 3, out=out)
root = irtrace.load(out).root
want = 3 * math.sin(0.5) * 0.5 + 0.5
assert t.result == pyprog.f(0.5, 3) and abs(root.value - want) < 1e-12, root.value
ret = root.children[-1]
assert ret.kind == "Return" and ret.referenced()[0].value == root.value
assert root.children[1] in ret.backward()
d = irtrace.grad(out).derivatives[0]
dwant = 3 * (math.cos(0.5) * 0.5 + math.sin(0.5)) + 1
assert abs(d - dwant) < 1e-12, d
print(f"python: f(0.5, 3) = {root.value!r}, d/dx = {d!r} (analytic {dwant!r})")
PY
    fail "the Python package in $dir"
  (cd "$work/py" && PYTHONPATH=${path:+$path:} /usr/bin/python3 -m irtrace trace -o cli.fb \
    pyprog.py f 0.5 3) || fail "python3 -m irtrace trace (package in $dir)"
  "$build/bin/irt-check" "$work/py/cli.fb" >/dev/null || fail "irt-check of python3 -m irtrace's trace"
  diff -u <("$build/bin/irt-print" --no-meta "$work/py/py.fb") \
    <("$build/bin/irt-print" --no-meta "$work/py/cli.fb") ||
    fail "python3 -m irtrace trace records another trace than irtrace.track"
}

build_examples() {  # BUILD_DIR [CMAKE_ARGS...]: the CMake project, then each check
  local dir=$1 ex variant
  shift
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.log" ||
    { cat "$dir.log"; fail "configuring tests/install failed"; }
  cmake --build "$dir" >>"$dir.log" || { cat "$dir.log"; fail "building tests/install failed"; }
  for ex in "${examples[@]}"; do
    for variant in ${variants[$ex]}; do
      "check_$ex" "$dir/${ex}_$variant"
      step "$ex ($variant, find_package) ok"
    done
  done
}

build_pkg_config() {  # PKG_CONFIG_PATH OUTPUT [G++ ARGS...]: the reader with plain g++
  local flags path=$1 out=$2
  shift 2
  flags=$(PKG_CONFIG_PATH=$path pkg-config --cflags --libs irtrace) || fail "pkg-config irtrace"
  # shellcheck disable=SC2086  # flags are words
  g++ -std=c++20 -o "$out" "$here/reader.cc" $flags "$@"
  check_reader "$out"
  step "reader (shared, pkg-config) ok"
}

step "examples against the prefix"
build_examples "$work/examples" -DCMAKE_PREFIX_PATH="$prefix"
build_pkg_config "$prefix/lib/pkgconfig" "$work/reader_pc" -Wl,-rpath,"$prefix/lib"
[[ $(ldd "$work/reader_pc") == *" $prefix/lib/libirtrace.so"* ]] ||
  fail "the pkg-config build does not use the installed libirtrace.so"

step "installed tools"
for t in "${traces[@]}"; do
  "$prefix/bin/irt-check" "$t" >/dev/null || fail "irt-check $t"
  "$prefix/bin/irt-print" "$t" >"$work/print.txt"
  "$build/bin/irt-print" "$t" | diff -u - "$work/print.txt" || fail "installed irt-print differs"
done
# Rules from <prefix>/share/irtrace, with no environment and from elsewhere.
(cd / && "$prefix/bin/irt-grad" -vv "$work/h.fb") >"$work/grad.txt" 2>"$work/grad.err" ||
  { cat "$work/grad.err"; fail "installed irt-grad failed"; }
grep -F "rules from $prefix/bin/../share/irtrace/default.rules" "$work/grad.err" >/dev/null ||
  { cat "$work/grad.err"; fail "installed irt-grad did not use the installed rules"; }
"$build/bin/irt-grad" "$work/h.fb" | diff -u - "$work/grad.txt" || fail "installed irt-grad differs"
if command -v man >/dev/null; then
  [[ $(man -M "$prefix/share/man" -w irt-print) == "$prefix/share/man/man1/irt-print.1" ]] ||
    fail "man -M PREFIX/share/man does not find irt-print"
fi

if ((has_python)); then
  step "the Python package"
  pydir=$prefix/lib/python3/dist-packages
  for f in irtrace/__init__.py irtrace/__main__.py irtrace/default.rules; do
    [[ -e $pydir/$f ]] || fail "cmake --install did not install $f"
  done
  compgen -G "$pydir/irtrace/_native*.so" >/dev/null || fail "cmake --install did not install _native"
  [[ -e $prefix/share/man/man1/irtrace-python.1 ]] || fail "no irtrace-python(1) installed"
  check_python "$pydir" "$pydir"
  step "python package ok"
fi

if [[ $(id -u) != 0 || ${CI:-} != true ]]; then
  step "the .deb check runs only as root with CI=true: skipped"
  exit 0
fi

step "cpack -G DEB"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >"$work/cpack.log" ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/deb/irtrace_*.deb "$work"/deb/irtrace-dev_*.deb)
((has_python)) && debs+=("$work"/deb/python3-irtrace_*.deb)
for d in "${debs[@]}"; do
  [[ -f $d ]] || fail "cpack made no $d"
  dpkg-deb --field "$d" Package Version Architecture Depends
done
cleanup() { apt-get remove --purge -y irtrace irtrace-dev python3-irtrace >/dev/null || true; }
trap cleanup EXIT
apt-get install -y "${debs[@]}"
page=$(man -w irt-print) || fail "man -w irt-print finds nothing after installing the .deb"
[[ $page == /usr/share/man/man1/irt-print.1* ]] || fail "man -w irt-print: $page"
(cd / && /usr/bin/irt-grad -vv "$work/h.fb") >"$work/grad.txt" 2>"$work/grad.err" ||
  { cat "$work/grad.err"; fail "/usr/bin/irt-grad failed"; }
grep -F "rules from /usr/bin/../share/irtrace/default.rules" "$work/grad.err" >/dev/null ||
  { cat "$work/grad.err"; fail "/usr/bin/irt-grad did not use /usr/share/irtrace"; }
"$build/bin/irt-grad" "$work/h.fb" | diff -u - "$work/grad.txt" || fail "/usr/bin/irt-grad differs"
step "examples against /usr"
build_examples "$work/examples-usr"
build_pkg_config "" "$work/reader_pc_usr"
# /lib is /usr/lib on Debian 12.
[[ $(ldd "$work/reader_pc_usr") =~ \ (/usr)?/lib/libirtrace\.so ]] ||
  fail "the pkg-config build does not use /usr/lib/libirtrace.so"
if ((has_python)); then
  check_python /usr/lib/python3/dist-packages
  [[ $(man -w irtrace-python) == /usr/share/man/man1/irtrace-python.1* ]] ||
    fail "man -w irtrace-python"
  step "python3-irtrace ok"
fi
apt-get remove --purge -y irtrace irtrace-dev
((has_python)) && apt-get remove --purge -y python3-irtrace
trap - EXIT
[[ ! -e /usr/bin/irt-grad && ! -e /usr/lib/cmake/irtrace && ! -e /usr/lib/python3/dist-packages/irtrace ]] ||
  fail "apt-get remove left files"
step ".deb ok"
