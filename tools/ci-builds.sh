#!/usr/bin/env bash
# What CI builds besides tools/test.sh's RelWithDebInfo build (gcc, the
# portable CUDA architectures), to build only: users build gvs with any
# build type and with gcc or clang, and choose their GPU architectures.
#  1. build-rel: Release, gcc, GVS_WERROR=ON, every target (the CUDA test
#     programs and benchmarks too), for -DCMAKE_CUDA_ARCHITECTURES=80;
#     vector_add must then hold machine code and PTX for sm_80 and
#     nothing else (cuobjdump): the user's architectures are honoured.
#  2. build-clang: Debug, clang (C, and C++ for the driver API's test
#     programs), GVS_WERROR=ON, every target.
# One CUDA architecture each keeps them short: each more is one more
# nvcc pass for each of the ~60 CUDA programs, and the C code, which
# the warnings are about, is the same for any.  Any warning, build
# failure or check failure fails it.
#
# Environment: GVS_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GVS_JOBS:-$(nproc)}

step() { printf '\n=== %s (%ds)\n' "$*" "$SECONDS"; }

step "Release build (gcc, GVS_WERROR=ON, CUDA architecture 80)"
CC=gcc cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DGVS_WERROR=ON \
    -DCMAKE_CUDA_ARCHITECTURES=80
cmake --build build-rel -j"$jobs"

step "-DCMAKE_CUDA_ARCHITECTURES=80 honoured"
python3 tests/gpu/cuda_arch.py --required --expect 80 \
    build-rel/tests/gpu/vector_add

step "Debug build (clang, GVS_WERROR=ON)"
CC=clang CXX=clang++ cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Debug -DGVS_WERROR=ON \
    -DCMAKE_CUDA_ARCHITECTURES=80
cmake --build build-clang -j"$jobs"
step "builds done"
