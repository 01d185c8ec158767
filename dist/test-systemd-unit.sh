#!/bin/sh
# dist.systemd_unit (dist/CMakeLists.txt): checks gvsd's systemd unit as
# cmake --install installs it.
#   test-systemd-unit.sh CMAKE DIST_INSTALL_SCRIPT GVSD UNIT_DIR SYSUSERS_DIR
# DIST_INSTALL_SCRIPT is dist's cmake_install.cmake, run alone into a
# temporary prefix and DESTDIR; GVSD, the build tree's gvsd, is linked
# into that prefix, where systemd-analyze verify looks for the program of
# ExecStart=; UNIT_DIR and SYSUSERS_DIR are GVS_SYSTEMD_UNIT_DIR and
# GVS_SYSUSERS_DIR.  Exit 77 (skipped) without systemd-analyze, unless
# GVS_REQUIRE_SYSTEMD=1.
set -eu
cmake=$1 install_script=$2 gvsd=$3 unit_dir=$4 sysusers_dir=$5
status=0
fail() { echo "FAIL: $*"; status=1; }

if ! command -v systemd-analyze >/dev/null 2>&1; then
    if [ "${GVS_REQUIRE_SYSTEMD:-0}" = 1 ]; then
        echo "FAIL: systemd-analyze is required (apt-get install systemd)"
        exit 1
    fi
    echo "SKIP: no systemd-analyze on PATH (Debian: apt-get install systemd)"
    exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Installed under PREFIX, staged in DESTDIR.
prefix=$tmp/prefix stage=$tmp/stage
in_stage() { case $1 in /*) echo "$stage$1" ;; *) echo "$stage$prefix/$1" ;; esac; }
if ! DESTDIR=$stage "$cmake" -DCMAKE_INSTALL_PREFIX="$prefix" \
        -P "$install_script" >"$tmp/install" 2>&1; then
    echo "FAIL: cmake -P $install_script:"
    cat "$tmp/install"
    exit 1
fi
unit=$(in_stage "$unit_dir")/gvsd.service
sysusers=$(in_stage "$sysusers_dir")/gvsd.conf
for f in "$unit" "$sysusers"; do
    [ -f "$f" ] || { echo "FAIL: cmake --install made no $f"; exit 1; }
done
[ -e "$prefix" ] && fail "the install wrote under $prefix, not DESTDIR"
# The keys as systemd reads them: comments and blank lines dropped.
grep -v -e '^[[:space:]]*[#;]' -e '^[[:space:]]*$' "$unit" >"$tmp/keys"

# Every line here must be in the unit, as written.
while IFS= read -r want; do
    grep -qxF -- "$want" "$tmp/keys" || fail "the unit lacks '$want'"
done <<'EOF'
Type=exec
Restart=on-failure
RestartPreventExitStatus=2
KillMode=mixed
OOMPolicy=continue
User=gvsd
Group=gvsd
RuntimeDirectory=gvs
CacheDirectory=gvs
NoNewPrivileges=yes
CapabilityBoundingSet=
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
DevicePolicy=closed
DeviceAllow=char-nvidia* rw
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
WantedBy=multi-user.target
EOF
# Keys that would break gvsd or that it does not support (the unit's
# comments say why).
for key in MemoryDenyWriteExecute PrivateDevices ProcSubset DynamicUser \
           ExecReload PrivateNetwork; do
    grep -q "^$key=" "$tmp/keys" && fail "the unit sets $key="
done

# ExecStart=: the prefix's gvsd; its config, gvs.conf(5)'s default.
grep -qxF "ExecStart=$prefix/bin/gvsd" "$tmp/keys" ||
    fail "ExecStart= is not $prefix/bin/gvsd: $(grep '^ExecStart=' "$tmp/keys")"
grep -qxF "Environment=GVS_CONFIG=/etc/gvs/gvs.conf" "$tmp/keys" ||
    fail "the unit does not set GVS_CONFIG=/etc/gvs/gvs.conf"
mkdir -p "$prefix/bin"
ln -s "$gvsd" "$prefix/bin/gvsd"

# systemd's own check.  Its warnings (an unknown key, a bad value, a
# program that is not there) leave its exit status 0: any output fails.
# --man=no: the man pages named in Documentation= are gvs's own, built
# apart (docs/man).
mkdir "$tmp/verify.d"
cp "$unit" "$tmp/verify.d/gvsd.service"
if ! systemd-analyze verify --man=no "$tmp/verify.d/gvsd.service" >"$tmp/verify" 2>&1 ||
        [ -s "$tmp/verify" ]; then
    fail "systemd-analyze verify:"
    cat "$tmp/verify"
fi
# What systemd rates the unit's exposure (0 best, 10 worst), for the log;
# a rise past 3.0 means a protection was lost.
if systemd-analyze security --help 2>&1 | grep -q -- --offline; then
    systemd-analyze security --offline=yes "$tmp/verify.d/gvsd.service" 2>&1 |
        grep 'Overall exposure' || true
    systemd-analyze security --offline=yes --threshold=30 \
        "$tmp/verify.d/gvsd.service" >/dev/null 2>&1 ||
        fail "systemd-analyze security rates the unit's exposure above 3.0"
fi

# The sysusers.d entry, applied to an empty root, makes gvsd's user and
# group.
if command -v systemd-sysusers >/dev/null 2>&1; then
    mkdir -p "$tmp/root/etc"
    systemd-sysusers --root="$tmp/root" "$sysusers" >"$tmp/sysusers" 2>&1 ||
        { fail "systemd-sysusers $sysusers:"; cat "$tmp/sysusers"; }
    grep -q '^gvsd:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$' "$tmp/root/etc/passwd" 2>/dev/null ||
        fail "systemd-sysusers made no gvsd user"
    grep -q '^gvsd:x:' "$tmp/root/etc/group" 2>/dev/null ||
        fail "systemd-sysusers made no gvsd group"
fi

[ $status = 0 ] && echo "ok: $unit_dir/gvsd.service, $sysusers_dir/gvsd.conf"
exit $status
