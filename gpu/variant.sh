#!/usr/bin/env bash
# Prepares carry-NAME/: smla and libsmla of a build folder (default: this tree's build/, built
# first) and a cache with the target lists' kernels for sm_90a, beside carry/ (gpu/carry.sh), so
# that one GPU round times binaries or kernel-source variants against each other (gpu/ab.sh).
#   gpu/variant.sh NAME [BUILD_DIR]     e.g. gpu/variant.sh base ../base/build
# Pass carry and every carry-NAME in `carry`.
set -eu
cd "$(dirname "$0")/.."
name=${1:?usage: gpu/variant.sh NAME [BUILD_DIR]}
build=${2:-build}
[ "$build" = build ] && cmake --build build --target smla_cli libsmla.so
rm -rf "carry-$name" && mkdir "carry-$name"
cp "$build/smla" "carry-$name/"
cp -P "$build"/libsmla.so* "carry-$name/"
# The presets of gpu/lists/targets*.txt at their context lengths, and the uniform fp8-q problem.
cache=carry-$name/cache.sqlite
for preset in dsv4-flash-tp1 dsv4-flash-tp8 dsv4-pro-tp1 dsv4-pro-tp8; do
  "$build/smla" cache build --cache "$cache" --preset $preset --arch sm_90a >/dev/null
done
"$build/smla" cache build --cache "$cache" --preset dsv4-pro-tp8 --max-context 1048576 --arch sm_90a >/dev/null
file=$(mktemp --suffix=.json)
cat >"$file" <<JSON
{"name": "uniform-fp8q-h128", "heads": 128, "q_dtype": "fp8_e4m3", "kv_layout": "fp8_uniform",
 "layers": [{"name": "csa", "sources": [{"page_size": 256, "width": 128}, {"page_size": 64, "width": 1024}]}]}
JSON
"$build/smla" cache build --cache "$cache" --deployment "$file" --arch sm_90a >/dev/null
rm -f "$file"
sqlite3 "$cache" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
du -sh "carry-$name"
