#!/bin/busybox sh
# The guest's /init (tools/vm/gvs-vm puts it in the initramfs beside a
# static busybox and the kernel modules named in /modules.list): mounts
# the host's root read-only (virtio-9p tag hostroot), the host's /tmp
# writable over it (tag hosttmp: a checkout or build there is seen), and
# the job's directory (tag job), brings up the network of QEMU's user mode
# (10.0.2.15, the host at 10.0.2.2), hides NVIDIA's driver libraries as
# tools/../nogpu.sh does, runs the job's command chrooted into the
# host's root, writes its exit status into the job's directory and
# powers off.  The guest has no GPU: no /dev/nvidia* exists in it.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /host
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
say() { echo "gvs-vm: $*" > /dev/ttyS0; }
for m in $(cat /modules.list); do
    insmod "/lib/modules/$m.ko" 2>/dev/null || say "insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=512000
if ! mount -t 9p -o "$opts,ro,cache=loose" hostroot /host; then
    say "cannot mount the host's root"; reboot -f
fi
for d in proc sys dev tmp run; do [ -d "/host/$d" ] || say "no /$d on the host"; done
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/shm /host/dev/pts
mount -t tmpfs shm /host/dev/shm
mount -t tmpfs run /host/run
if ! mount -t 9p -o "$opts,cache=none" hosttmp /host/tmp; then
    say "cannot mount the host's /tmp"; reboot -f
fi
job=/host/run/gvs-vm-job
mkdir -p "$job"
if ! mount -t 9p -o "$opts,cache=none" job "$job"; then
    say "cannot mount the job's directory"; reboot -f
fi
ip link set lo up
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
    ip route add default via 10.0.2.2 || say "no network"
# NVIDIA's driver libraries, were the host to have them: masked, so that
# only what gvs serves reaches a GPU.
for dir in /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/cuda/compat; do
    for f in /host$dir/libcuda.so.* /host$dir/libnvidia-ml.so.*; do
        case "$f" in
        *.so.[0-9]*.[0-9]*) [ -f "$f" ] && ! [ -L "$f" ] && mount --bind /dev/null "$f" ;;
        esac
    done
done
chroot /host /bin/sh /run/gvs-vm-job/cmd.sh \
    > "$job/stdout" 2> "$job/stderr" < /dev/null
echo $? > "$job/rc"
sync
umount "$job"
reboot -f
