#!/usr/bin/env bash
# Builds gvs and runs its tests.  With no argument: every test that needs
# no GPU (what CI runs).  `tools/test.sh gpu` runs the GPU label instead.
# Warnings are errors here (GVS_WERROR=ON; GVS_WERROR=OFF in the
# environment turns that off).  The CUDA programs are built for
# CMakeLists.txt's default architectures: this machine's GPUs, else the
# portable list (build.cuda_architectures checks them with cuobjdump).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GVS_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGVS_WERROR="${GVS_WERROR:-ON}"
cmake --build "$build" -j"$(nproc)"
cd "$build"
if [ "${1:-}" = gpu ]; then
    ctest -L gpu --output-on-failure
else
    ctest -LE gpu --output-on-failure -j"$(nproc)"
fi
