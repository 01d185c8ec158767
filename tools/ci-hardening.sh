#!/usr/bin/env bash
# What CI runs after tools/test.sh (docs/security.md, "Fuzzing and sanitizers"):
#  1. the whole non-GPU suite again, built with ASan and UBSan
#     (GVS_SANITIZE=ON, gcc) in build-asan;
#  2. the libFuzzer harnesses of tests/fuzz (GVS_FUZZ=ON, clang) in
#     build-fuzz: each replays its committed corpus, then fuzzes for
#     FUZZ_SECONDS.
# Any test failure, sanitizer report or fuzzer crash fails it.  A crash
# input is kept in build-fuzz/crashes/<harness>/.
#
# Environment: FUZZ_SECONDS (default 60) per harness, GVS_JOBS (default
# nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${GVS_JOBS:-$(nproc)}
fuzz_seconds=${FUZZ_SECONDS:-60}
harnesses="fuzz_frame fuzz_hello fuzz_buf fuzz_config fuzz_cudart_ops fuzz_cuda_ops fuzz_nvml_ops"

# Tests run under ASan with leak detection off, and tests left out of
# the ASan suite, each with the reason; every other non-GPU test runs
# with all checks.
#   unit.client_fork: its forked child exits holding the parent's
#   client state, and checks that its stderr is exactly one line;
#   LeakSanitizer's report at the child's exit would be more.
asan_no_leaks="unit.client_fork"
no_leaks_re="^($(echo $asan_no_leaks | tr ' ' '|'))\$"
#   e2e.lib_NAME.TRANSPORT: these programs link NVIDIA's C++ libraries
#   (cuBLAS, cuFFT, ...) and gvs's libcudart.so.13, which brings the ASan
#   runtime in late: the process jumps to address 0 as it starts, before
#   any call reaches gvsd.  They run in the main suite (tools/test.sh)
#   and on the GPU; their static-runtime builds run here.
#   idle.sessions.TRANSPORT: they measure the CPU time idle sessions
#   cost gvsd as built for use (0.00% of one core for 64; ivshmem's
#   polled waits 1.1% for 15); under the sanitizers each wake-up costs
#   their own bookkeeping too (1.0%; ivshmem's 15 reached its limit of
#   3.00% in a CI run).
#   cudart.mock_shared.ivshmem: its program is not instrumented, so the
#   ASan runtime comes in after the C library and never sees gvs's
#   threads start (pthread_create resolves to the C library's); its
#   forked child runs new threads on the stacks of the parent's (the C
#   library's stack cache), and ASan reports the redzones the parent's
#   ivshmem heartbeat thread left there.  It runs in the main suite, the
#   unix and shm variants of the same program here.
asan_left_out_re="^((e2e\.lib_[a-z]+|idle\.sessions)\.(unix|tcp|shm|ivshmem)|cudart\.mock_shared\.ivshmem)\$"

step() { printf '\n=== %s (%ds)\n' "$*" "$SECONDS"; }

step "ASan+UBSan build"
# One CUDA architecture: the CUDA programs only serve the e2e tests here,
# which run them without a GPU.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGVS_SANITIZE=ON \
    -DGVS_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90
cmake --build build-asan -j"$jobs"

step "ASan+UBSan suite"
# halt_on_error/abort: a report fails the process that made it, so the
# test fails.  The CUDA programs of the e2e tests are not instrumented
# but load the instrumented libcudart.so.13 of gvs, which brings the
# ASan runtime in late: verify_asan_link_order=0 accepts that.  The vm
# label is left out: its guests run the programs without this
# environment, and the README's suite has run it already.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
(cd build-asan &&
 ctest -LE 'gpu|vm' --output-on-failure -j"$jobs" \
     -E "$no_leaks_re|$asan_left_out_re" &&
 ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 \
     ctest -LE 'gpu|vm' --output-on-failure -R "$no_leaks_re")
unset ASAN_OPTIONS UBSAN_OPTIONS

step "fuzzers build"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGVS_FUZZ=ON -DGVS_BUILD_GPU_TESTS=OFF -DGVS_WERROR=ON
cmake --build build-fuzz -j"$jobs" --target gvs-fuzzers

for h in $harnesses; do
    bin=$root/build-fuzz/tests/fuzz/$h
    corpus=$root/tests/fuzz/corpus/$h
    work=$root/build-fuzz/fuzz-work/$h
    crashes=$root/build-fuzz/crashes/$h
    rm -rf "$work"
    mkdir -p "$work" "$crashes"
    opts=(-rss_limit_mb=2048 -timeout=10 -artifact_prefix="$crashes/")
    step "$h: corpus replay"
    "$bin" "${opts[@]}" -runs=0 "$corpus"
    step "$h: fuzzing ${fuzz_seconds}s"
    # New inputs go to a scratch directory: the committed corpus changes
    # only by hand.
    "$bin" "${opts[@]}" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
        "$work" "$corpus" 2>&1 | grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
done
step "hardening done"
