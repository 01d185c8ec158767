#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses (tests/fuzz/corpus/<harness>/,
docs/security.md, "Fuzzing and sanitizers"): small valid inputs in each harness's input
format (see the comment at the top of tests/fuzz/<harness>.c).

usage: tools/fuzz-seeds.py [--out DIR]   (default: tests/fuzz/corpus)

The files it writes are committed; run it again after a change of the
wire formats or of an .api file, and commit what changed.  Files it does
not write (crash inputs added by hand, named crash-*) are left alone.
"""
import argparse
import os
import struct
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "apigen"))
import gvs_apigen  # noqa: E402  (the cudart op descriptions)

# include/gvs/proto.h
MAGIC = 0x31535647
PROTO_VERSION = 2
F_REPLY, F_NOREPLY, F_NOTIFY = 1, 2, 4
CTL_HELLO, CTL_PING, CTL_BYE = 1, 2, 3
# The plugins fuzz_hello's gvsd knows.
ALPHA = (1, "alpha", 0x0123456789ABCDEF)
BETA = (2, "beta", 0xFEDCBA9876543210)


def u8(v): return struct.pack("<B", v)
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v)
def i32(v): return struct.pack("<i", v)
def u64(v): return struct.pack("<Q", v)
def i64(v): return struct.pack("<q", v)
def f32(v): return struct.pack("<f", v)
def blob(b): return u32(len(b)) + b


def frame(plugin, op, body=b"", flags=0, lane=0, req=1):
    return (u32(MAGIC) + u32(len(body)) + u16(plugin) + u16(op) + u32(flags) +
            u32(lane) + u64(req) + body)


def hello(plugins, version=PROTO_VERSION, program=b"vector_add", pid=4242):
    b = u32(version) + u32(pid) + blob(program) + u32(len(plugins))
    for pid_, name, h in plugins:
        b += u16(pid_) + blob(name.encode()) + u64(h)
    return b


def hello_reply(status=0, message=b"", session=3):
    return i32(status) + u32(PROTO_VERSION) + blob(message) + u32(session)


def frame_seeds(cudart_id):
    """fuzz_frame: path/max byte, 4 piece sizes, stream."""
    stream = (frame(0, CTL_HELLO, hello([(cudart_id, "cudart", 0x1234)])) +
              frame(0, CTL_PING, req=2) +
              frame(cudart_id, 19, u64(0) * 3, F_NOREPLY, lane=1, req=3) +
              frame(0, CTL_HELLO, hello_reply(), F_REPLY) +
              frame(cudart_id, 141, u64(7) + i32(0) + u8(0), F_NOTIFY, req=9) +
              frame(0, CTL_BYE, req=4))
    big = frame(cudart_id, 12, u64(0) + u64(0) + blob(bytes(range(256)) * 8),
                F_NOREPLY, lane=2, req=5)
    out = {}
    max_default = 6 << 2  # maxima[6]: GVS_FRAME_MAX_DEFAULT
    for path, name in ((0, "recv"), (1, "split"), (2, "drop"), (3, "small")):
        out["%s_frames" % name] = u8(path | max_default) + b"\xfe\xfe\xfe\xfe" + stream
        out["%s_short_reads" % name] = u8(path | max_default) + b"\x00\x06\x1b\x02" + stream
        out["%s_bulk" % name] = u8(path | max_default) + b"\x7f\x10\xfe\x03" + big
    out["recv_timeout"] = u8(max_default) + b"\x0a\xff\x0a\x0a" + stream
    out["recv_max_4096"] = u8(4 << 2) + b"\xfe\xfe\xfe\xfe" + big
    return out


def hello_seeds(cudart_id):
    """fuzz_hello: mode byte, then a HELLO body, a reply body or a stream."""
    cudart = (cudart_id, "cudart", 0x1234)
    return {
        "decode_hello": u8(0) + hello([cudart]),
        "decode_hello_empty": u8(0) + hello([], program=b""),
        "decode_hello_two": u8(0) + hello([ALPHA, BETA]),
        "decode_reply_ok": u8(1) + hello_reply(),
        "decode_reply_refused": u8(1) + hello_reply(-16, b"plugin cudart: operation table mismatch", 0),
        "handshake_alpha": u8(2) + hello([ALPHA]),
        "handshake_alpha_beta": u8(2) + hello([ALPHA, BETA]),
        "handshake_unknown": u8(2) + hello([cudart]),
        "handshake_mismatch": u8(2) + hello([(1, "alpha", 1)]),
        "handshake_twice": u8(2) + hello([ALPHA, ALPHA]),
        "handshake_version": u8(2) + hello([ALPHA], version=1),
        "handshake_stream": u8(3) + frame(0, CTL_HELLO, hello([ALPHA])),
        "handshake_not_hello": u8(3) + frame(0, CTL_PING),
    }


def buf_seeds():
    """fuzz_buf: buffer byte, then op byte + arguments (fuzz_buf.c)."""
    put = lambda which, v: u8(which) + v  # noqa: E731
    get = lambda which: u8(6 + which)  # noqa: E731
    mixed = (put(0, u8(7)) + put(1, u16(0x1234)) + put(2, u32(9)) + put(3, u64(1 << 40)) +
             put(4, i32(-5)) + put(5, i64(-6)) + b"".join(get(i) for i in range(6)))
    blobs = (u8(13) + u16(5) + b"hello" + u8(15) + u8(13) + u16(3) + b"gvs" + u8(16) + u16(255) +
             u8(22) + u8(16) + u16(2) + u8(21) + u8(20) + u8(21))
    raw = (u8(12) + u16(16) + bytes(range(16)) + u8(14) + u16(4) + u8(18) + u16(4) +
           u8(19) + u16(4) + u8(17) + u16(8) + bytes(8) + u8(14) + u16(20))
    return {
        "ints_256": u8(5 << 1) + mixed,
        "ints_max8": u8(3 << 1) + mixed,
        "blobs_4096": u8(6 << 1) + blobs,
        "raw_4096": u8(6 << 1) + raw,
        "view": u8(1) + u16(12) + u32(3) + b"abc" + u32(0) + u8(15) + u8(16) + u16(8) + u8(21),
    }


CONFIG_GVSD = b"""# gvsd
listen = unix:///run/gvs/gvsd.sock
listen = tcp://127.0.0.1:7300
listen=shm:///run/gvs/gvsd.shm
plugin_dir = /usr/lib/gvs/plugins
plugin = cudart
log_level = info
max_frame = 16M
handshake_timeout_ms = 5000
max_sessions = 64
devices = 0,GPU-1111
"""
CONFIG_ACCESS = b"""token = 0123456789abcdef0123 name=alice quota=4G
token = fedcba9876543210fedc
insecure = no
tls_cert = /etc/gvs/cert.pem
tls_key = /etc/gvs/key.pem
tls_ca = /etc/gvs/ca.pem
socket_mode = 0660
socket_group = gvs
allow_uid = 0,1000
allow_gid = 100
idle_timeout_ms = 60000
memory_quota = 2G
metrics_listen = tcp://127.0.0.1:9300
"""
CONFIG_CLIENT = b"""server = tcp://gpuhost:7300   # the backend
keepalive_ms = 30000
token = 0123456789abcdef0123
"""


def config_seeds():
    return {
        "gvsd.conf": CONFIG_GVSD,
        "access.conf": CONFIG_ACCESS,
        "client.conf": CONFIG_CLIENT,
        "bad_line.conf": b"listen = unix:///a\nmax_frame = 12Q\n",
        "comments.conf": b"\n  # comment\nlog_level=warn # trailing\nserver = unix:///a#b\n",
    }


CODEC_BYTES = {"i32": i32, "u32": u32, "i64": i64, "u64": u64, "f32": f32}


def api_request(op, value):
    """The body of op's described in-arguments, each set to value (0 or 1),
    sizes to 256."""
    body = b""
    for a in op.ins:
        codec = a.codec()[0]
        v = 256 if (value and a.typ == "size") else value
        body += CODEC_BYTES[codec](float(v) if codec == "f32" else v)
    return body


def cudart_seeds():
    """fuzz_cudart_ops: u16 op, mode byte, body.  Ops with described
    arguments get them (zeros, then ones); the hand-coded ones get bodies
    of the shapes they mostly take: u64s, then u64 stream + address +
    blob."""
    with open(os.path.join(ROOT, "plugins", "cudart", "cudart.api"), encoding="utf-8") as f:
        d = gvs_apigen.parse(os.path.join(ROOT, "plugins", "cudart", "cudart.api"), f.read())
    out = {}
    for op in d.ops:
        if "notify" in op.flags:
            continue
        head = u16(op.num)
        mode = 0
        if op.args:
            out["%s_zero" % op.name] = head + u8(mode) + api_request(op, 0)
            out["%s_one" % op.name] = head + u8(mode | 2) + api_request(op, 1)
        else:
            for n in (0, 1, 2, 3, 4):
                out["%s_u64x%d" % (op.name, n)] = head + u8(mode) + u64(0) * n
            out["%s_i32" % op.name] = head + u8(mode) + i32(0)
            out["%s_blob" % op.name] = head + u8(mode) + u64(0) + u64(0) + blob(bytes(16))
        if "async" in op.flags:
            out["%s_noreply" % op.name] = head + u8(mode | 1) + api_request(op, 0)
    return out, d.plugin_id


def cuda_seeds():
    """fuzz_cuda_ops: u16 op, body.  Ops with described arguments get them
    (zeros, then ones: devices 0 and 1 of the mock); the hand-coded ones
    get each shape those take: a device (i32), a PCI bus id (blob)."""
    path = os.path.join(ROOT, "plugins", "cuda", "cuda.api")
    with open(path, encoding="utf-8") as f:
        d = gvs_apigen.parse(path, f.read())
    out = {}
    for op in d.ops:
        head = u16(op.num)
        if op.args:
            out["%s_zero" % op.name] = head + api_request(op, 0)
            if op.ins:
                out["%s_one" % op.name] = head + api_request(op, 1)
        else:
            out["%s_i32" % op.name] = head + i32(1)
            out["%s_bus_id" % op.name] = head + blob(b"0000:19:00.0")
    # A load of the mock's image as a library (a module needs a context),
    # with JIT options whose logs the reply reports (cuda.api, LOAD):
    # info and error log buffers of 64 bytes, the wall time.
    load = [op.num for op in d.ops if op.name == "LOAD"][0]
    options = u32(5) + b"".join(i32(o) + u64(v) for o, v in
                                ((3, 1), (4, 64), (5, 1), (6, 64), (2, 0)))
    out["LOAD_options"] = (u16(load) + u8(0) + u8(0) + options +
                           blob(b"//gvs-mock library\n\0"))
    return out


def nvml_seeds():
    """fuzz_nvml_ops: u16 op, body.  Ops with described arguments get them
    (zeros, then ones: GPUs 0 and 1 of the mock); the hand-coded ones
    get the shapes nvml.api gives them."""
    path = os.path.join(ROOT, "plugins", "nvml", "nvml.api")
    with open(path, encoding="utf-8") as f:
        d = gvs_apigen.parse(path, f.read())
    out = {}
    ops = {op.name: op.num for op in d.ops}
    for op in d.ops:
        head = u16(op.num)
        if op.args:
            out["%s_zero" % op.name] = head + api_request(op, 0)
            if op.ins:
                out["%s_one" % op.name] = head + api_request(op, 1)
    out["INIT"] = u16(ops["INIT"])
    for which in (0, 1, 2):
        out["SYSTEM_STRING_%d" % which] = u16(ops["SYSTEM_STRING"]) + i32(which)
    for which in range(6):
        out["DEVICE_STRING_%d" % which] = (u16(ops["DEVICE_STRING"]) + u32(which % 2) +
                                           i32(which) + u32(96))
    out["DEVICE_STRING_short"] = u16(ops["DEVICE_STRING"]) + u32(0) + i32(0) + u32(4)
    out["DEVICE_MEMORY"] = u16(ops["DEVICE_MEMORY"]) + u32(0)
    for kind in range(3):
        out["DEVICE_PROCESSES_%d" % kind] = u16(ops["DEVICE_PROCESSES"]) + u32(0) + i32(kind)
    out["DEVICE_FIELD_VALUES"] = (u16(ops["DEVICE_FIELD_VALUES"]) + u32(1) + u32(2) +
                                  u32(7) + u32(0) + u32(9) + u32(1))
    return out


def write(out_dir, harness, seeds):
    d = os.path.join(out_dir, harness)
    os.makedirs(d, exist_ok=True)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    return len(seeds), sum(len(v) for v in seeds.values())


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fuzz", "corpus"))
    ns = ap.parse_args(argv)
    cudart, cudart_id = cudart_seeds()
    for harness, seeds in (("fuzz_frame", frame_seeds(cudart_id)),
                           ("fuzz_hello", hello_seeds(cudart_id)),
                           ("fuzz_buf", buf_seeds()),
                           ("fuzz_config", config_seeds()),
                           ("fuzz_cudart_ops", cudart),
                           ("fuzz_cuda_ops", cuda_seeds()),
                           ("fuzz_nvml_ops", nvml_seeds())):
        n, size = write(ns.out, harness, seeds)
        print("%-16s %4d files %8d bytes" % (harness, n, size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
