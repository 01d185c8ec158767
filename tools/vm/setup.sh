#!/usr/bin/env bash
# Unpacks what tools/vm/gvs-vm boots into DIR (default /opt/gvs-vm): the
# kernel of Debian's linux-image-amd64 (vmlinuz), the virtio and 9p
# modules gvs-vm loads (modules/, those tools/vm/modules.list names), and the static busybox of
# busybox-static, from Debian's packages.  The packages are downloaded
# with apt-get download into DIR/debs, unless they are there already
# (carried to a machine that cannot download).  Nothing is installed:
# the packages are unpacked with dpkg-deb into DIR.  QEMU itself is
# Debian's qemu-system-x86 (apt-get install qemu-system-x86).
#
# usage: tools/vm/setup.sh [-h] [DIR]
# Exit status: 0 done, 1 a package could not be had or unpacked, 2 usage.
set -euo pipefail
case "${1:-}" in
-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
-*) echo "setup.sh: unknown option $1 (--help)" >&2; exit 2 ;;
esac
dir=${1:-/opt/gvs-vm}
modules=$(cat "$(dirname "$0")/modules.list")
mkdir -p "$dir/debs" "$dir/modules"
cd "$dir/debs"
have() { ls $1_*.deb >/dev/null 2>&1; }
if ! have 'linux-image-[0-9]*-amd64' || ! have busybox-static; then
    kernel() {
        apt-cache depends linux-image-amd64 2>/dev/null |
            sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1
    }
    image=$(kernel)
    [ -n "$image" ] || { apt-get update >/dev/null && image=$(kernel); }
    if [ -z "$image" ]; then
        echo "setup.sh: apt-cache names no kernel for linux-image-amd64 (apt-get update?)" >&2
        exit 1
    fi
    # apt's sandbox user cannot write everywhere root can: not its
    # business here.
    apt-get download -o APT::Sandbox::User=root "$image" busybox-static
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for deb in linux-image-[0-9]*-amd64_*.deb busybox-static_*.deb; do
    dpkg-deb -x "$deb" "$tmp"
done
cp "$(ls "$tmp"/boot/vmlinuz-* | head -1)" "$dir/vmlinuz"
cp "$tmp/bin/busybox" "$dir/busybox"
for m in $modules; do
    f=$(find "$tmp/lib/modules" -name "$m.ko" | head -1)
    if [ -z "$f" ]; then
        echo "setup.sh: the kernel package has no module $m" >&2
        exit 1
    fi
    cp "$f" "$dir/modules/"
done
echo "setup.sh: $dir: $(basename "$(ls "$tmp"/boot/vmlinuz-*)"), busybox, $(ls "$dir/modules" | wc -l) modules"
