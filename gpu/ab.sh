#!/usr/bin/env bash
# On the GPU machine: the same `smla bench` argument lists with the binaries of carry/ and of each
# carry-NAME/ (gpu/variant.sh), one folder after the other; rows are prefixed with the
# folder and also written to $OUT/ab.txt. A folder without a cache compiles its kernels there.
#   gpu/ab.sh "--preset dsv4-pro-tp8 --layer csa --q-len 1 --rows 1,256" [more lists]
# With AB_CHECK set to `smla check` argument lists separated by ';', each folder first checks
# its kernels against the CPU reference and prints one line per list (a variant that changes
# the results is caught in the same round):
#   AB_CHECK="--preset dsv4-pro-tp1 --layer csa --lse --rows 3,257; --preset dsv4-flash-tp1 --rows 64"
# Pass --lse: the presets ask for none, and a variant can keep out within tolerance while its lse
# misses (the e4m3 scores of 2026-12-05 did).
set -u
OUT=${OUT:-/tmp/smla-out}
mkdir -p "$OUT"
IFS=';' read -r -a checks <<<"${AB_CHECK:-}"
for dir in carry carry-*; do
  [ -x "$dir/smla" ] || continue
  cache=/tmp/smla-ab-$dir.sqlite
  rm -f "$cache-wal" "$cache-shm"  # an earlier round's log must not meet a fresh copy
  [ -f "$dir/cache.sqlite" ] && cp "$dir/cache.sqlite" "$cache"
  for args in "${checks[@]}"; do
    [[ -z "${args// /}" ]] && continue
    LD_LIBRARY_PATH=$PWD/$dir SMLA_CACHE=$cache timeout 200 "$dir/smla" check $args \
      >>"$OUT/check-$dir.log" 2>&1
    echo "$dir check rc=$? ($args): $(tail -1 "$OUT/check-$dir.log")"
  done
  for args in "$@"; do
    LD_LIBRARY_PATH=$PWD/$dir SMLA_CACHE=$cache timeout 120 "$dir/smla" bench $args 2>&1 |
      grep -E '^(h|# note)' | sed "s|^|$dir |"
  done
done | tee "$OUT/ab.txt"
