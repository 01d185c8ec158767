#!/bin/sh
# Records how the real NVIDIA driver of this GPU machine answers
# cuGetProcAddress(_v2), cuGetExportTable and the integrity check, into
# the directory OUT_DIR (README.md beside this script lists the files).
# Needs gcc, nm, the CUDA toolkit (cuda.h and its stub libcuda.so) and the
# driver; takes well under 2 minutes.
#
# usage: run.sh OUT_DIR
# The toolkit is $CUDA_HOME, else the one of the nvcc on PATH, else
# /usr/local/cuda.
set -eu

out=${1:?usage: run.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

cuda=${CUDA_HOME:-}
if [ -z "$cuda" ] && command -v nvcc >/dev/null 2>&1; then
    cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
fi
[ -n "$cuda" ] || cuda=/usr/local/cuda
inc=$cuda/include
[ -f "$inc/cuda.h" ] || { echo "run.sh: no cuda.h in $inc" >&2; exit 1; }
stub=
for s in "$cuda/lib64/stubs/libcuda.so" \
         "$cuda/targets/x86_64-linux/lib/stubs/libcuda.so"; do
    [ -f "$s" ] && { stub=$s; break; }
done
[ -n "$stub" ] || { echo "run.sh: no stubs/libcuda.so in $cuda" >&2; exit 1; }

probe=$out/procaddr_probe
gcc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -I"$inc" -I"$here/../frontend" \
    "$here/procaddr_probe.c" "$here/../frontend/md2.c" -ldl -o "$probe"
"$probe" --selftest > "$out/selftest.txt"

{
    echo "toolkit $cuda"
    echo "stub $stub"
    cat /proc/driver/nvidia/version 2>/dev/null || true
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv \
        2>/dev/null || true
} > "$out/driver-version.txt"
nvidia-smi -q 2>&1 | head -20 > "$out/nvidia-smi.txt" || true

# The names to probe: the toolkit stub's exports, plus the cu* names the
# real driver exports beyond them (probed as extra names).
nm -D --defined-only "$stub" | awk '{print $NF}' | LC_ALL=C sort -u \
    > "$out/driver-exports.txt"
diff "$here/driver-exports.txt" "$out/driver-exports.txt" \
    > "$out/driver-exports.diff" || true
real=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
: > "$out/extra-names.txt"
if [ -n "$real" ]; then
    nm -D --defined-only "$real" | awk '$NF ~ /^cu/ {print $NF}' |
        LC_ALL=C sort -u > "$out/real-driver-exports.txt"
    LC_ALL=C comm -13 "$out/driver-exports.txt" \
        "$out/real-driver-exports.txt" > "$out/extra-names.txt"
fi

"$probe" -o "$out/procaddr.txt" "$out/driver-exports.txt" \
    "$out/extra-names.txt"
"$probe" -o "$out/export-tables.txt" --export-tables
now=$(date +%s)
for v in 13000 13001 13002; do
    "$probe" --integrity "$v" "$now"
done > "$out/integrity.txt"

# The same series on every multiple of 10: the default grid's ranges must
# come out identical (only the timing comments and the grid line differ).
if timeout 90 "$probe" --dense -o "$out/procaddr-dense.txt" \
        "$out/driver-exports.txt" "$out/extra-names.txt"; then
    grep -v '^#\|^grid ' "$out/procaddr.txt" > "$out/.a"
    grep -v '^#\|^grid ' "$out/procaddr-dense.txt" > "$out/.b"
    if cmp -s "$out/.a" "$out/.b"; then
        echo "dense grid: identical ranges" > "$out/dense-check.txt"
    else
        diff "$out/.a" "$out/.b" > "$out/dense-check.txt" || true
    fi
    rm -f "$out/.a" "$out/.b"
else
    echo "dense grid: not completed (exit $?)" > "$out/dense-check.txt"
fi

grep -h '^# \|integrity: ' "$out/procaddr.txt" "$out/integrity.txt"
head -5 "$out/dense-check.txt"
echo "run.sh: results in $out"
