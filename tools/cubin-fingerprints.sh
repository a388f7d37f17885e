#!/usr/bin/env bash
# Lists "key text|xxh64 of the cubin" for the kernels of every preset (16K and 1M context) and of
# five layout x q dtype x lse cases (uniform fp8 q with and without the lse, uniform bf16 q, bf16
# with the lse, packed fp8 q) at 1, 8, 16, 24, 32, 64 and 128 heads (pages of 61 and 64, q_len 1
# and 2), for sm_90a and sm_100a (sm_103a compiles from the same source as sm_100a), compiled by
# build/smla into a scratch cache. No GPU needed (~3 minutes on 2 cores). Cases outside these are
# not seen: extend the lists for a change that touches them.
# A change meant to leave the kernels alone (a template split, a comment) shows it when the
# lists before and after are equal:
#   tools/cubin-fingerprints.sh /tmp/before.txt; (change); tools/cubin-fingerprints.sh /tmp/after.txt
#   diff /tmp/before.txt /tmp/after.txt
set -eu
cd "$(dirname "$0")/.."
out=$1
smla=build/smla
db=$(mktemp -u --suffix=.sqlite)
trap 'rm -f "$db" "$db"-* "${deployment:-}"' EXIT
for preset in $("$smla" cache build --help | grep -o 'dsv4-[a-z]*-tp[0-9]' | sort -u); do
  for context in 16384 1048576; do
    "$smla" cache build --cache "$db" --preset "$preset" --max-context "$context" \
      --arch sm_90a,sm_100a >/dev/null
  done
done
deployment=$(mktemp --suffix=.json)
for heads in 1 8 16 24 32 64 128; do
  for combo in "fp8_e4m3 fp8_uniform false" "fp8_e4m3 fp8_uniform true" "bf16 fp8_uniform false" \
    "bf16 bf16 true" "fp8_e4m3 fp8_packed false"; do
    read -r q_dtype layout lse <<<"$combo"
    cat >"$deployment" <<JSON
{"heads": $heads, "q_dtype": "$q_dtype", "kv_layout": "$layout", "want_lse": $lse, "q_lens": [1, 2],
 "layers": [{"name": "csa", "sources": [{"page_size": 61, "width": 128}, {"page_size": 64, "width": 1024}]}]}
JSON
    "$smla" cache build --cache "$db" --deployment "$deployment" --arch sm_90a,sm_100a >/dev/null
  done
done
sqlite3 "$db" "SELECT key_text, cubin_xxh64 FROM kernels ORDER BY key_text" >"$out"
echo "$(wc -l <"$out") kernels in $out"
