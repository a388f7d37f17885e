#!/usr/bin/env bash
# On the GPU machine: the same `smla bench` argument lists with the binaries of carry/ and of each
# carry-NAME/ (tools/gpu-variant.sh), one folder after the other; rows are prefixed with the
# folder and also written to $OUT/ab.txt. A folder without a cache compiles its kernels there.
#   tools/gpu-ab.sh "--preset dsv4-pro-tp8 --layer csa --q-len 1 --rows 1,256" [more lists]
# Check a variant's results too: LD_LIBRARY_PATH=$PWD/carry-NAME carry-NAME/smla check ...
set -u
OUT=${OUT:-/tmp/smla-out}
mkdir -p "$OUT"
for dir in carry carry-*; do
  [ -x "$dir/smla" ] || continue
  cache=/tmp/smla-ab-$dir.sqlite
  [ -f "$dir/cache.sqlite" ] && cp "$dir/cache.sqlite" "$cache"
  for args in "$@"; do
    LD_LIBRARY_PATH=$PWD/$dir SMLA_CACHE=$cache timeout 120 "$dir/smla" bench $args 2>&1 |
      grep '^h' | sed "s|^|$dir |"
  done
done | tee "$OUT/ab.txt"
