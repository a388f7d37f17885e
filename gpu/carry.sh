#!/usr/bin/env bash
# Prepares carry/ for a GPU round: the Release binaries and a cache prewarmed for sm_90a with
# every kernel the GPU tests and the benchmark list use (no GPU needed here).
set -eu
cd "$(dirname "$0")/.."
cmake --build build --target smla_cli smla_gpu_tests smla_c_api_test smla
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
# The presets at the benchmarked context lengths, for Hopper and for the sm_100a SASS check.
for preset in dsv4-flash-tp1 dsv4-flash-tp2 dsv4-flash-tp4 dsv4-flash-tp8 dsv4-pro-tp1 dsv4-pro-tp2 dsv4-pro-tp4 dsv4-pro-tp8; do
  for context in 16384 131072 1048576; do
    build/smla cache build --cache carry/cache.sqlite --preset $preset --max-context $context --arch sm_90a,sm_100a >/dev/null
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
  build/smla cache build --cache carry/cache.sqlite --deployment "$file" --arch sm_90a,sm_100a >/dev/null
  rm -f "$file"
done
sqlite3 carry/cache.sqlite "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
du -sh carry
