#!/usr/bin/env bash
# Prepares carry/ for a GPU round: the Release binaries and a cache prewarmed for sm_90a with
# every kernel the GPU tests and the benchmark list use (no GPU needed here).
set -eu
cd "$(dirname "$0")/.."
cmake --build build --target smla_cli smla_gpu_tests smla_c_api_test libsmla.so
rm -rf carry && mkdir -p carry
cp build/smla build/smla_gpu_tests build/smla_c_api_test carry/
cp -P build/libsmla.so* carry/
# The gather-ceiling, wgmma-rate and cluster-occupancy probes (`gpu/round.sh ceiling
# wgmma-rate cluster-occupancy`), where nvcc is present.
nvcc=${CUDAToolkit_ROOT:-/usr/local/cuda}/bin/nvcc
if [ -x "$nvcc" ]; then
  "$nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o carry/gather_ceiling gpu/probes/gather_ceiling.cu
  "$nvcc" -O3 -std=c++17 -I. -gencode=arch=compute_90a,code=sm_90a -o carry/wgmma_rate gpu/probes/wgmma_rate.cu
  "$nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o carry/cluster_occupancy gpu/probes/cluster_occupancy.cu
fi
SMLA_CACHE=$PWD/carry/cache.sqlite SMLA_PREWARM_ARCH=sm_90a build/smla_gpu_tests --gtest_brief=1 >/dev/null
# The presets at the benchmarked context lengths, for Hopper and (unless CARRY_ARCH says
# otherwise: the 64 MiB a round may carry) for the sm_100a SASS check.
arch=${CARRY_ARCH:-sm_90a,sm_100a}
for preset in dsv4-flash-tp1 dsv4-flash-tp2 dsv4-flash-tp4 dsv4-flash-tp8 dsv4-pro-tp1 dsv4-pro-tp2 dsv4-pro-tp4 dsv4-pro-tp8; do
  for context in 16384 131072 1048576; do
    build/smla cache build --cache carry/cache.sqlite --preset $preset --max-context $context --arch $arch >/dev/null
  done
done
# The uniform layout with fp8 q, whose e4m3 kernels the presets (packed, bf16 q) do not use: the
# SASS step lists their MMA forms too.
for heads in 8 16 32 64 128; do
  file=$(mktemp --suffix=.json)
  cat >"$file" <<JSON
{"name": "uniform-fp8q-h$heads", "heads": $heads, "q_dtype": "fp8_e4m3", "kv_layout": "fp8_uniform",
 "layers": [{"name": "csa", "sources": [{"page_size": 256, "width": 128}, {"page_size": 64, "width": 1024}]}]}
JSON
  build/smla cache build --cache carry/cache.sqlite --deployment "$file" --arch $arch >/dev/null
  rm -f "$file"
done
# The problems of the Python step (tests/python_gpu, examples/dsv4_decode_step.py), for sm_90a.
python_problems=()
for heads in 8 16 64 128; do
  for layout in fp8_packed fp8_uniform; do
    python_problems+=("\"heads\": $heads, \"kv_layout\": \"$layout\", \"want_lse\": true, \"q_lens\": [1, 2]")
  done
done
python_problems+=("\"heads\": 16, \"kv_layout\": \"fp8_packed\", \"want_lse\": false")
for entry in "${python_problems[@]}"; do
  file=$(mktemp --suffix=.json)
  cat >"$file" <<JSON
{"name": "python-step", $entry,
 "layers": [{"name": "csa", "sources": [{"page_size": 256, "width": 128}, {"page_size": 64, "width": 512}]}]}
JSON
  build/smla cache build --cache carry/cache.sqlite --deployment "$file" --arch sm_90a >/dev/null
  rm -f "$file"
done
file=$(mktemp --suffix=.json)
cat >"$file" <<JSON
{"name": "python-sparse-fwd", "heads": 16, "kv_layout": "bf16", "has_sink": false, "want_lse": true,
 "layers": [{"name": "topk", "sources": [{"page_size": 1, "width": 64}]}]}
JSON
build/smla cache build --cache carry/cache.sqlite --deployment "$file" --arch sm_90a >/dev/null
rm -f "$file"
sqlite3 carry/cache.sqlite "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
du -sh carry
