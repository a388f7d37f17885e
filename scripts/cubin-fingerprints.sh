#!/usr/bin/env bash
# Lists "key text|xxh64 of the cubin|hash of its code" for the kernels of every preset (16K and 1M context) and of
# five layout x q dtype x lse cases (uniform fp8 q with and without the lse, uniform bf16 q, bf16
# with the lse, packed fp8 q) at 1, 8, 16, 24, 32, 64 and 128 heads (pages of 61 and 64, q_len 1
# and 2), for sm_90a and sm_100a (sm_103a compiles from the same source as sm_100a), compiled by
# build/smla into a scratch cache. No GPU needed (~3 minutes on 2 cores). Cases outside these are
# not seen: extend the lists for a change that touches them.
# The code hash covers the cubin's .text sections only: the machine code. Cubins also carry the
# prologue's constants as symbols, so a renamed or added constant changes the cubin but not the
# code. A change meant to leave the kernels alone (a template split, a comment) shows it when the
# code hashes before and after are equal:
#   scripts/cubin-fingerprints.sh /tmp/before.txt; (change); scripts/cubin-fingerprints.sh /tmp/after.txt
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
python3 - "$db" >"$out" <<'PY'
import hashlib, sqlite3, struct, sys

def code_hash(blob):
    """SHA-1 of the ELF's .text.* sections (by name): the kernels' machine code."""
    shoff = struct.unpack_from("<Q", blob, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]
    def name(offset):
        start = names + offset
        return blob[start:blob.index(b"\0", start)].decode()
    digest = hashlib.sha1()
    for section in sorted(sections, key=lambda s: name(s[0])):
        if name(section[0]).startswith(".text."):
            digest.update(name(section[0]).encode())
            digest.update(blob[section[4]:section[4] + section[5]])
    return digest.hexdigest()[:16]

rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT key_text, cubin_xxh64, cubin FROM kernels ORDER BY key_text")
for key, xxh, cubin in rows:
    print(f"{key}|{xxh}|{code_hash(bytes(cubin))}")
PY
echo "$(wc -l <"$out") kernels in $out"
