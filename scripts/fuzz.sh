#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) in build-fuzz/ with clang and runs each
# for SECONDS (default 30) on a copy of its seed corpus, so the committed corpus is never
# written. Exits 1 when a target crashes, hangs or fails a check (the input that did is kept as
# build-fuzz/fuzz-runs/<target>/crash-*, timeout-*, ...), 2 when it cannot build or start them.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
if [[ ! "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]" >&2
  exit 2
fi
command -v clang++ >/dev/null || { echo "fuzz: clang++ is not installed" >&2; exit 2; }

# Only what the targets link is built (smla_fuzz_targets), at -O1: the fuzz build's cost is
# compiling the layers with the sanitizers, on CI's two cores.
cuda_root=()
[[ -n "${CUDAToolkit_ROOT:-}" ]] && cuda_root=(-DCUDAToolkit_ROOT="$CUDAToolkit_ROOT")
if [[ ! -f build-fuzz/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DSMLA_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    "${cuda_root[@]}" >/dev/null || exit 2
fi
cmake --build build-fuzz --target smla_fuzz_targets || exit 2

targets=(fuzz_api_validation fuzz_deployment fuzz_tile_config fuzz_cache_file)
failed=()
for target in "${targets[@]}"; do
  run=build-fuzz/fuzz-runs/$target
  rm -rf "$run"
  mkdir -p "$run"
  cp -r "fuzz/corpus/$target" "$run/corpus"
  dict=()
  [[ -f fuzz/dict/$target.dict ]] && dict=(-dict="fuzz/dict/$target.dict")
  # One process (the machine has other work); a single input past 25 s is a hang.
  status=0
  "build-fuzz/fuzz/$target" "$run/corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$run/" >"$run/log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log")
  if ((status == 0)); then
    echo "fuzz: $target: ${runs:-?} runs in ${seconds} s, no crash"
  else
    echo "fuzz: $target FAILED (exit $status); its log ends:" >&2
    tail -n 40 "$run/log" >&2
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]} (inputs in build-fuzz/fuzz-runs/<target>/)" >&2
  exit 1
fi
