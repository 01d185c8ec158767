#!/bin/sh
# Records what NVIDIA's nvidia-smi asks of NVML (README.md), into OUT_DIR:
# one log per command line, with api_trace.so preloaded.  Needs gcc and
# NVIDIA's driver; takes seconds.
#
# usage: run.sh OUT_DIR
set -eu
out=${1:?usage: run.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
gcc -shared -fPIC -O1 -Wall -Wextra -o "$out/api_trace.so" "$here/../../../tools/probe/api_trace.c" -ldl
nvidia-smi --version > "$out/versions.txt" 2>&1 || true
run() {
    name=$1
    shift
    API_TRACE_LOG="$out/$name.log" LD_PRELOAD="$out/api_trace.so" \
        nvidia-smi "$@" > "$out/$name.out" 2>&1 || echo "exit $?" >> "$out/$name.out"
}
run list -L
run query --query-gpu=name,uuid,pci.bus_id,memory.total,memory.used,compute_cap --format=csv
run table
run q -q
