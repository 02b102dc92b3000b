#!/usr/bin/env bash
# Prints the path of speedscope's file-format JSON schema, fetching it first
# if this build has not: `npm pack` downloads the speedscope package from the
# npm registry into $IRT_BUILD/test-deps/ (never into the source tree; the
# schema is not committed) and the schema is taken from its
# dist/release/file-format-schema.json. The version is pinned so that the
# golden cases validate against one schema; a lock keeps concurrent cases
# from fetching twice. Needs npm (Debian's `npm`, .ci/install-deps) and the
# registry the first time; IRT_SPEEDSCOPE_SCHEMA names a local copy instead.
set -euo pipefail
version=1.25.0
if [[ -n ${IRT_SPEEDSCOPE_SCHEMA:-} ]]; then
  echo "$IRT_SPEEDSCOPE_SCHEMA"
  exit 0
fi
dir=${IRT_BUILD:?IRT_BUILD must name the build directory}/test-deps/speedscope-$version
schema=$dir/file-format-schema.json
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [[ ! -s $schema ]]; then
  tmp=$(mktemp -d "$dir/fetch.XXXXXX")
  if ! (cd "$tmp" && npm pack --silent "speedscope@$version" >/dev/null 2>npm.log); then
    echo "speedscope-schema.sh: npm pack speedscope@$version failed:" >&2
    cat "$tmp/npm.log" >&2
    rm -rf "$tmp"
    exit 1
  fi
  tar -xzf "$tmp/speedscope-$version.tgz" -C "$tmp" package/dist/release/file-format-schema.json
  mv "$tmp/package/dist/release/file-format-schema.json" "$schema"
  rm -rf "$tmp"
fi
echo "$schema"
