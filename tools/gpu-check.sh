#!/usr/bin/env bash
# On a GPU machine: builds gvs, then runs the GPU label and every other
# label (native vs gvs over unix, tcp and shm included), logging into ${OUT:-.}.
# With --bench, also runs bench/run.py (ratios to native) into bench.md.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build build-gpu -j"$(nproc)"; } >"$out/build.log" 2>&1; then
    tail -50 "$out/build.log"
    exit 1
fi
cd build-gpu
ctest -L gpu --output-on-failure -V >"$out/ctest-gpu.log" 2>&1
gpu_rc=$?
grep -E "^[0-9]+: [a-z_]+: native|tests passed|\*\*\*Failed|Timeout" "$out/ctest-gpu.log"
ctest -LE gpu --output-on-failure -j8 >"$out/ctest-nogpu.log" 2>&1
rest_rc=$?
grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest-nogpu.log"
bench_rc=0
if [ "${1:-}" = --bench ]; then
    python3 ../bench/run.py --build . --transports unix,tcp,shm,tls --repeat 2 \
        >"$out/bench.md" 2>"$out/bench.err"
    bench_rc=$?
    cat "$out/bench.md"
    tail -5 "$out/bench.err"
fi
exit $((gpu_rc | rest_rc | bench_rc))
