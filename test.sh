#!/usr/bin/env bash
# Builds irtrace and runs every test, as CI does (.ci/run calls this).
#
#   ./test.sh [PHASE...]     all phases by default, in this order:
#     release    Release build (build-release/), ctest: unit tests + golden cases
#     install    tests/install/run.sh: installs the release build into a
#                temporary prefix, builds tests/install/'s examples against
#                it (CMake package, static and shared, and pkg-config) and
#                checks them and the installed tools; as root with CI=true
#                also builds, installs and removes the .deb files (needs the
#                release build)
#     sanitize   ASan+UBSan build (build-asan/, -DIRT_SANITIZE=ON), ctest again
#     fuzz       clang libFuzzer build (build-fuzz/), two fuzzers: each replays
#                every input of its regressions directory, then fuzzes from
#                its seed corpus. trace_fuzzer (tests/fuzz/regressions/,
#                corpus/): the reader, checker and the tools' analyses, with
#                the structure-aware mutator, for IRT_FUZZ_SECONDS;
#                text_fuzzer (text-regressions/, text-corpus/): IR modules
#                (parsed, run, recorded, checked), rules, literals, specs and
#                .npy files, for IRT_TEXT_FUZZ_SECONDS (the release phase's
#                ctest runs a short campaign of every tool over mutated
#                traces, tests/fuzz/campaign.py)
#     man        man/check.sh: mandoc lint, pages up to date, every --help
#                option documented, examples real (needs the release build)
#
# Run as root with apt-get available, it first installs the Debian packages
# it needs (.ci/install-deps --if-needed) unless IRT_NO_INSTALL is set.
# Every phase runs even if one before it failed; the exit status is 0 only
# if all passed. Environment:
#   IRT_JOBS           parallel build and test jobs (default 2)
#   IRT_FUZZ_SECONDS   trace fuzzing time (default 45)
#   IRT_TEXT_FUZZ_SECONDS  text fuzzing time (default 30)
#   IRT_NO_INSTALL     set: never install packages
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD

jobs=${IRT_JOBS:-2}
fuzz_seconds=${IRT_FUZZ_SECONDS:-45}
text_fuzz_seconds=${IRT_TEXT_FUZZ_SECONDS:-30}
all_phases=(release install sanitize fuzz man)
phases=("$@")
((${#phases[@]})) || phases=("${all_phases[@]}")
for p in "${phases[@]}"; do
  [[ " ${all_phases[*]} " == *" $p "* ]] || {
    echo "test.sh: unknown phase '$p' (phases: ${all_phases[*]})" >&2
    exit 2
  }
done

banner() { printf '\n==== %s ====\n' "$*"; }

configure_build() {  # DIR CMAKE_ARGS...
  local dir=$1
  shift
  cmake -S "$root" -B "$root/$dir" -G Ninja "$@"
  cmake --build "$root/$dir" -j "$jobs"
}

# Tests write their temporary files under the build directory, so that
# test runs of several build directories on one machine never share them.
run_ctest() {  # DIR
  local tmp=$root/$1/tmp
  rm -rf "$tmp"
  mkdir -p "$tmp"
  TMPDIR=$tmp ctest --test-dir "$root/$1" --output-on-failure -j "$jobs"
}

phase_release() {
  configure_build build-release -DCMAKE_BUILD_TYPE=Release
  run_ctest build-release
}

phase_install() {
  "$root/tests/install/run.sh" "$root/build-release"
}

phase_sanitize() {
  # Debug keeps assertions on; -O1 keeps the tests quick under the
  # sanitizers; -g1 (line tables, all a sanitizer's report needs) compiles
  # Eigen-heavy files in half the time full debug information takes.
  # IRT_UNITY compiles libtrace eight sources at a time (the release build
  # keeps one unit per source, as benchmarked).
  configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
    -DIRT_SANITIZE=ON -DIRT_UNITY=ON
  ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan
}

phase_fuzz() {
  local dir=$root/build-fuzz
  # Line tables only (-g1): enough for the fuzzer's reports, quicker to build.
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIRT_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DIRT_TESTS=OFF -DIRT_UNITY=ON \
    -DCMAKE_CXX_COMPILER=clang++
  cmake --build "$dir" -j "$jobs" --target trace_fuzzer text_fuzzer
  mkdir -p "$dir/corpus" "$dir/text-corpus" "$dir/artifacts"
  local ok=1
  fuzz_one trace_fuzzer regressions corpus trace.dict corpus "$fuzz_seconds" || ok=0
  fuzz_one text_fuzzer text-regressions text-corpus text.dict text-corpus "$text_fuzz_seconds" || ok=0
  ((ok))
}

# fuzz_one FUZZER REGRESSIONS SEEDS DICT NEW SECONDS: replays every input of
# tests/fuzz/REGRESSIONS, then fuzzes for SECONDS from tests/fuzz/SEEDS.
# New inputs go to build-fuzz/NEW (kept between local runs); the committed
# seeds are read only.
fuzz_one() {
  local dir=$root/build-fuzz fuzzer=$root/build-fuzz/bin/$1 ok=1
  local regressions=("$root/tests/fuzz/$2"/*)
  if [[ -e ${regressions[0]} ]]; then
    echo "$1: replaying ${#regressions[@]} regression inputs"
    "$fuzzer" "${regressions[@]}" || {
      ok=0
      echo "test.sh: a regression input of tests/fuzz/$2/ fails again (above)" >&2
    }
  fi
  if ! "$fuzzer" -max_total_time="$6" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -dict="$root/tests/fuzz/$4" -artifact_prefix="$dir/artifacts/$1-" -print_final_stats=1 \
    "$dir/$5" "$root/tests/fuzz/$3"; then
    ok=0
    echo "test.sh: $1 found a bug; its input is in $dir/artifacts/." >&2
    echo "  Reproduce: $fuzzer FILE; then add FILE to tests/fuzz/$2/." >&2
  fi
  ((ok))
}

phase_man() {
  "$root/man/check.sh" "$root/build-release/bin"
}

if [[ -z ${IRT_NO_INSTALL:-} ]]; then
  banner "dependencies"
  "$root/.ci/install-deps" --if-needed
fi

declare -A took status
passed=0
failed=0
for p in "${phases[@]}"; do
  banner "$p"
  start=$SECONDS
  # A background subshell keeps `set -e` in force inside the phase (it is
  # ignored in a subshell whose status is tested directly).
  (
    set -euo pipefail
    "phase_$p"
  ) &
  if wait $!; then
    status[$p]=ok
    passed=$((passed + 1))
  else
    status[$p]=FAILED
    failed=$((failed + 1))
  fi
  took[$p]=$((SECONDS - start))
done

banner "summary"
for p in "${phases[@]}"; do
  printf '%-10s %-7s %5d s\n' "$p" "${status[$p]}" "${took[$p]}"
done
echo "phases: $passed passed, $failed failed"
((failed == 0))
