#!/usr/bin/env bash
# One GPU round on a GPU machine: run from the repository root of the copy there, with the
# binaries and a prewarmed cache built beforehand in carry/ (gpu/carry.sh).
#   gpu/round.sh [tests] [sanitize] [python] [race] [bench] [tune] [sass] [ncu] [ncu-sass]
#                [ceiling] [wgmma-rate] [cluster-occupancy]
#   (default: tests sanitize bench sass)
#   SANITIZE_FILTER: the gtest filter the sanitizers run (default Sanitized.*)
# Logs and JSON go to $OUT; a short summary is printed last.
set -u
OUT=${OUT:-/tmp/smla-out}
mkdir -p "$OUT"
steps=${*:-tests sanitize bench sass}
#   ncu: one profile of a decode kernel (stall reasons, memory, scheduler and instruction stats)
#        of NCU_PROBLEM's 256-row call (default: the 16-head CSA problem)
export SMLA_CACHE=/tmp/smla-cache.sqlite
# A write-ahead log left by an earlier round on a warm machine must not be applied to the fresh
# copy (SQLite then reports the database malformed, and the runtime keeps kernels in memory).
rm -f "$SMLA_CACHE-wal" "$SMLA_CACHE-shm"
cp carry/cache.sqlite "$SMLA_CACHE" 2>/dev/null || true
export LD_LIBRARY_PATH=$PWD/carry:${LD_LIBRARY_PATH:-}
summary=()

nvidia-smi -L | tee "$OUT/device.txt"
carry/smla info | tee -a "$OUT/device.txt"

has() { [[ " $steps " == *" $1 "* ]]; }

if has tests; then
  timeout 400 carry/smla_gpu_tests --gtest_brief=1 >"$OUT/gpu_tests.log" 2>&1
  summary+=("gpu tests: rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu_tests.log" | tr '\n' ' ')")
  carry/smla_c_api_test >"$OUT/c_api.log" 2>&1
  summary+=("C API test: rc=$? $(tail -1 "$OUT/c_api.log")")
fi
if has sanitize; then
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
      carry/smla_gpu_tests --gtest_filter="${SANITIZE_FILTER:-Sanitized.*}" >"$OUT/sanitizer_$tool.log" 2>&1
    summary+=("compute-sanitizer $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1)")
  done
fi
if has python; then
  # The Python package with the machine's torch: its GPU tests, then the DSv4-Pro decode step.
  export SMLA_LIBRARY=$PWD/carry/libsmla.so
  PYTHONUNBUFFERED=1 timeout 400 python3 -m unittest discover -s tests/python_gpu -v \
    >"$OUT/python_gpu.log" 2>&1
  summary+=("python gpu tests: rc=$? $(tail -3 "$OUT/python_gpu.log" | tr '\n' ' ')")
  timeout 200 python3 examples/dsv4_decode_step.py >"$OUT/decode_step.log" 2>&1
  summary+=("decode step: rc=$? $(tr '\n' ' ' <"$OUT/decode_step.log" | tail -c 400)")
fi
if has race; then
  # Racecheck's hazard reports (blocks, threads, kind) of the batch-variant wgmma kernel, on
  # `smla bench`'s inputs (every row full, every index valid) and on `smla check`'s (empty rows,
  # invalid indices), at 2 and 64 rows.
  for rows in 2 64; do
    for tool in bench check; do
      extra=$([ $tool = bench ] && echo "--iters 1 --repeats 1 --pool-gb 0.02")
      SMLA_BATCH_VARIANT=1 timeout 150 compute-sanitizer --tool racecheck --racecheck-report hazard \
        carry/smla $tool --heads 64 --sources 256:128 --lse --rows $rows $extra \
        >"$OUT/race_${tool}_$rows.log" 2>&1
      summary+=("racecheck smla $tool --rows $rows: rc=$? $(grep -E 'RACECHECK SUMMARY' "$OUT/race_${tool}_$rows.log" | tail -1)")
    done
  done
fi
if has bench; then
  : >"$OUT/bench.txt"
  while read -r label args; do
    [[ -z "$label" || "$label" == \#* ]] && continue
    envs=$(grep -o 'SMLA_[A-Z_]*=[^ ]*' <<<"$args" | tr '\n' ' ')
    args=$(sed 's/SMLA_[A-Z_]*=[^ ]*//g' <<<"$args")
    echo "## $label: ${envs}smla bench $args" >>"$OUT/bench.txt"
    eval "env $envs timeout 120 carry/smla bench $args" >>"$OUT/bench.txt" 2>&1
  done < <(cat ${BENCH_LIST:-gpu/lists/matrix.txt})  # one list, or several separated by spaces
  summary+=("bench: $(grep -c '^h' "$OUT/bench.txt") rows in bench.txt")
fi
if has tune; then
  # `smla tune` of TUNE_PROBLEM (default: the 16-head CSA problem) in both modes, then
  # `smla bench` of it with the stored rows applied (mode tuned-*) and without (SMLA_TUNING=0).
  problem=${TUNE_PROBLEM:---preset dsv4-pro-tp8 --layer csa --q-len 1}
  rows=1,2,3,4,8,16,32,64,128,256
  : >"$OUT/tune.txt"
  for mode in 0 1; do
    flag=$([ $mode = 1 ] && echo --batch-variant)
    timeout 240 carry/smla tune $problem --max-rows 256 $flag >>"$OUT/tune.txt" 2>&1
    summary+=("tune (SMLA_BATCH_VARIANT=$mode): rc=$?")
    for tuning in 1 0; do
      echo "## SMLA_BATCH_VARIANT=$mode SMLA_TUNING=$tuning smla bench $problem --rows $rows" >>"$OUT/tune.txt"
      SMLA_BATCH_VARIANT=$mode SMLA_TUNING=$tuning timeout 120 carry/smla bench $problem \
        --rows $rows >>"$OUT/tune.txt" 2>&1
    done
  done
fi
if has ncu; then
  timeout 200 ncu --clock-control none -k regex:smla_decode --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section SourceCounters \
    --section InstructionStats --section ComputeWorkloadAnalysis \
    carry/smla bench ${NCU_PROBLEM:---preset dsv4-pro-tp8 --layer csa --q-len 1} --rows 256 \
    --iters 1 --repeats 1 >"$OUT/ncu.txt" 2>&1
  summary+=("ncu: rc=$? $(grep -E 'Duration|Memory Throughput|Compute \(SM\)' "$OUT/ncu.txt" | head -3 | tr -s ' ' | tr '\n' ';')")
fi
if has ncu-sass; then
  # Per-instruction counts and stall samples of the same kernel (NCU_PROBLEM), as CSV.
  timeout 200 ncu --clock-control none -k regex:smla_decode --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --import-source no -f -o "$OUT/profile" \
    carry/smla bench ${NCU_PROBLEM:---preset dsv4-pro-tp8 --layer csa --q-len 1} --rows 256 \
    --iters 1 --repeats 1 >"$OUT/ncu_sass.log" 2>&1
  ncu --import "$OUT/profile.ncu-rep" --page source --print-source sass --csv >"$OUT/sass_profile.csv" 2>>"$OUT/ncu_sass.log"
  summary+=("ncu-sass: $(wc -l <"$OUT/sass_profile.csv") lines")
fi
if has ceiling; then
  # The gather ceiling against the KV pool's size (gpu/probes/gather_ceiling.cu).
  timeout 120 carry/gather_ceiling >"$OUT/ceiling.txt" 2>&1
  summary+=("ceiling: rc=$? $(tr -s ' ' <"$OUT/ceiling.txt" | tail -n +2 | tr '\n' ';')")
fi
if has wgmma-rate; then
  # The wgmma kernel's products in isolation (gpu/probes/wgmma_rate.cu).
  timeout 120 carry/wgmma_rate >"$OUT/wgmma_rate.txt" 2>&1
  summary+=("wgmma-rate: rc=$?")
  cat "$OUT/wgmma_rate.txt"
fi
if has cluster-occupancy; then
  # How many 2-CTA clusters of the 16-head kernel's shape stay resident (gpu/probes/cluster_occupancy.cu).
  timeout 60 carry/cluster_occupancy >"$OUT/cluster_occupancy.txt" 2>&1
  summary+=("cluster-occupancy: rc=$? $(tr '\n' ';' <"$OUT/cluster_occupancy.txt")")
fi
if has sass; then
  # Dump the sm_100a cubins' SASS and count local-memory and MMA instructions.
  carry/smla cache export --arch sm_100a --dir /tmp/cubins >/dev/null 2>&1
  : >"$OUT/sass.txt"
  for f in /tmp/cubins/*.cubin; do
    [ -e "$f" ] || continue
    sass=$(cuobjdump -sass "$f")
    # Every MMA opcode form with its count, e.g. HMMA.16816.F32.BF16=32.
    mma=$(grep -oE '[A-Z]*MMA(\.[A-Za-z0-9_]+)+' <<<"$sass" | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')
    echo "$(basename "$f"): LDL=$(grep -c 'LDL' <<<"$sass") STL=$(grep -c 'STL' <<<"$sass") HMMA=$(grep -c HMMA <<<"$sass") LDSM=$(grep -c 'LDSM' <<<"$sass") F2FP=$(grep -c 'F2FP' <<<"$sass") LDGSTS=$(grep -c 'LDGSTS' <<<"$sass") $mma" >>"$OUT/sass.txt"
  done
  # The MMA forms across all cubins, and the index (cubin -> key) to read sass.txt with.
  cp /tmp/cubins/index.txt "$OUT/cubin_index.txt" 2>/dev/null
  grep -oE '[A-Z]*MMA(\.[A-Za-z0-9_]+)+=[0-9]+' "$OUT/sass.txt" | sed 's/=[0-9]*$//' | sort | uniq -c >"$OUT/mma_forms.txt"
  cat "$OUT/mma_forms.txt"
  summary+=("sass: $(wc -l <"$OUT/sass.txt") cubins, $(grep -cv 'LDL=0 STL=0' "$OUT/sass.txt") with local memory; MMA forms: $(awk '{printf "%s %s; ", $2, $1}' "$OUT/mma_forms.txt")")
fi

echo "==== summary"
grep -E '^\[  FAILED  \]' "$OUT/gpu_tests.log" 2>/dev/null | head -20
grep -E 'Failure|rel_l2|error' "$OUT/gpu_tests.log" 2>/dev/null | head -20
cat "$OUT/bench.txt" 2>/dev/null | grep -E '^(h|##|smla)' | head -60
grep -E '^(h|##|smla|problem)' "$OUT/tune.txt" 2>/dev/null | head -100
printf '%s\n' "${summary[@]}"
