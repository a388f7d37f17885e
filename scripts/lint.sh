#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the host sources, with the compile commands of build/; prints
# the findings and exits 1 if there are any, 2 if clang-tidy could not run. Not part of the test
# command: it takes about 3 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
command -v clang-tidy >/dev/null || { echo "lint: clang-tidy is not installed" >&2; exit 2; }
cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
files=$(git ls-files 'runtime/*.cpp' 'cache/*.cpp' 'codegen/*.cpp' 'autotune/*.cpp' \
  'reference/*.cpp' 'plan/*.cpp' 'deployments/*.cpp' 'harness/*.cpp' 'tools/*.cpp')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# One process per file, one output file each: clang-tidy exits 1 when it finds something (not a
# failure here), above that when it could not run.
status=0
printf '%s\n' $files | xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy -p build --quiet "$1" >"$2/$(echo "$1" | tr / _).out" 2>"$2/$(echo "$1" | tr / _).err"; [ $? -le 1 ]' \
  _ {} "$dir" || status=$?
if [ "$status" -ne 0 ]; then
  echo "lint: clang-tidy failed to run on some file:" >&2
  cat "$dir"/*.err >&2
  exit 2
fi
# A header's finding is reported once per file that includes it: count each once.
findings=$(cat "$dir"/*.out | grep -E '^[^ ].*: (warning|error):' | sort -u || true)
[ -n "$findings" ] && echo "$findings"
count=$(grep -c . <<<"$findings" || true)
echo "clang-tidy: $count findings"
[ "$count" -eq 0 ]
