#!/usr/bin/env bash
# Prepares carry/ for a GPU round: the Release binaries and a cache prewarmed for sm_90a with
# every kernel the GPU tests and the benchmark list use (no GPU needed here).
set -eu
cd "$(dirname "$0")/.."
cmake --build build
rm -rf carry && mkdir -p carry
cp build/smla build/smla_gpu_tests build/smla_c_api_test carry/
cp -P build/libsmla.so* carry/
SMLA_CACHE=$PWD/carry/cache.sqlite SMLA_PREWARM_ARCH=sm_90a build/smla_gpu_tests --gtest_brief=1 >/dev/null
du -sh carry
