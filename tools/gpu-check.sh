#!/usr/bin/env bash
# On a GPU machine: builds gvs (build-gpu, RelWithDebInfo, for sm_90 or
# $GVS_CUDA_ARCH), then runs the GPU label (native vs gvs over unix, tcp
# and shm) and every other label, logging into ${OUT:-.}.
#
# usage: tools/gpu-check.sh [-h] [--nogpu PATH] [--only REGEX] [--skip REGEX]
#                           [--jobs N] [--no-rest] [--bench | --bench-quick]
#   --nogpu PATH   the script that hides the GPU from gvs's clients
#                  (GVS_TEST_NOGPU: the brief's nogpu.sh); without it the
#                  clients could reach the local driver
#   --only REGEX   GPU tests whose names match (ctest -R), --skip: not (-E)
#   --jobs N       GPU tests at once (default 1: timings stay clean)
#   --no-rest      the GPU label only
#   --bench        bench/run.py, the whole suite, into bench.md;
#   --bench-quick  its --quick rows (launch + synchronize, overlap,
#                  16 and 64 clients, idle sessions)
# Exit status: 0 when everything run passed, 1 otherwise, 2 for bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.}
only="" skip="" jobs=1 rest=1 bench=""
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --nogpu) export GVS_TEST_NOGPU=$(realpath "$2"); shift ;;
    --only) only=$2; shift ;;
    --skip) skip=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --no-rest) rest=0 ;;
    --bench) bench=full ;;
    --bench-quick) bench=quick ;;
    *) echo "gpu-check.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo \
           -DCMAKE_CUDA_ARCHITECTURES="${GVS_CUDA_ARCH:-90}" &&
       cmake --build build-gpu -j"$(nproc)"; } >"$out/build.log" 2>&1; then
    tail -50 "$out/build.log"
    exit 1
fi
cd build-gpu
sel=(-L gpu)
[ -n "$only" ] && sel+=(-R "$only")
[ -n "$skip" ] && sel+=(-E "$skip")
ctest "${sel[@]}" -j"$jobs" --output-on-failure >"$out/ctest-gpu.log" 2>&1
gpu_rc=$?
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$out/ctest-gpu.log"
rest_rc=0
if [ "$rest" = 1 ]; then
    ctest -LE gpu --output-on-failure -j"$(nproc)" >"$out/ctest-nogpu.log" 2>&1
    rest_rc=$?
    grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest-nogpu.log"
fi
bench_rc=0
if [ -n "$bench" ]; then
    args=(--build . --transports unix,tcp,shm --repeat 3)
    [ "$bench" = quick ] && args+=(--quick)
    [ "$bench" = full ] && args=(--build . --transports unix,tcp,shm,tls --repeat 2)
    python3 ../bench/run.py "${args[@]}" >"$out/bench.md" 2>"$out/bench.err"
    bench_rc=$?
    cat "$out/bench.md"
    grep -v INFO "$out/bench.err" | tail -5
fi
[ $((gpu_rc | rest_rc | bench_rc)) = 0 ]
