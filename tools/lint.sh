#!/usr/bin/env bash
# clang-tidy (.clang-tidy) over the host sources, with the compile commands of build/; prints
# the findings and exits 1 if there are any. Not part of the test command: it takes minutes.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
files=$(git ls-files 'runtime/*.cpp' 'cache/*.cpp' 'codegen/*.cpp' 'autotune/*.cpp' \
  'reference/*.cpp' 'tools/*.cpp' 'tools/lib/*.cpp')
out=$(mktemp)
# NOTE: one process per file, two at a time: each parses its translation unit alone.
printf '%s\n' $files | xargs -P "$(nproc)" -n 1 clang-tidy -p build --quiet 2>/dev/null >"$out" || true
# A header's finding is reported once per file that includes it: count each once.
findings=$(grep -E '^[^ ].*: (warning|error):' "$out" | sort -u || true)
[ -n "$findings" ] && echo "$findings"
count=$(grep -c . <<<"$findings" || true)
rm -f "$out"
echo "clang-tidy: $count findings"
[ "$count" -eq 0 ]
