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
# --qemu also copies this machine's QEMU into DIR/qemu: the program, every
# library it loads (the loader and the C library included, so that it
# runs on a machine with another distribution's) and the firmware a
# guest of gvs-vm boots with; gvs-vm runs that copy when it finds it.
# DIR, packed, then travels to a machine where QEMU cannot be installed
# (the GPU machine).
#
# usage: tools/vm/setup.sh [-h] [--qemu] [DIR]
# Exit status: 0 done, 1 a package could not be had or unpacked, 2 usage.
set -euo pipefail
bundle=0
case "${1:-}" in
-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
--qemu) bundle=1; shift ;;
-*) echo "setup.sh: unknown option $1 (--help)" >&2; exit 2 ;;
esac
dir=$(realpath -m "${1:-/opt/gvs-vm}")
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
[ "$bundle" = 1 ] || exit 0
qemu=$(command -v qemu-system-x86_64) ||
    { echo "setup.sh: --qemu: no qemu-system-x86_64 here to copy" >&2; exit 1; }
rm -rf "$dir/qemu"
mkdir -p "$dir/qemu/bin" "$dir/qemu/lib" "$dir/qemu/share"
cp -L "$qemu" "$dir/qemu/bin/"
ldd "$qemu" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
    while read -r lib; do cp -L "$lib" "$dir/qemu/lib/"; done
# QEMU's emulation of the processor is a module of its own (loaded from
# $QEMU_MODULE_DIR, which gvs-vm sets for this copy).
cp -L /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so "$dir/qemu/lib/"
# What a q35 guest booted with -kernel reads: SeaBIOS, the kernel loader,
# the KVM APIC patcher, the virtio NIC's option ROM.
for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin \
         /usr/share/qemu/kvmvapic.bin /usr/lib/ipxe/qemu/efi-virtio.rom; do
    cp -L "$f" "$dir/qemu/share/"
done
echo "setup.sh: $dir/qemu: $(du -sh "$dir/qemu" | cut -f1), QEMU $("$qemu" --version | head -1 | awk '{print $4}')"
