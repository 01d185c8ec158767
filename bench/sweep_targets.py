"""The cells of a sweep (bench/sweep.cu through bench/run.py) that miss
the copy targets of issue 15, per transport, so that each run names
every row it does not meet:

* a transport whose client shares memory with the worker (shm, unix,
  which takes shm's rings, ivshmem): from 4 KiB, at least 90% of
  native's rate, every kind of copy and every pipeline row; below 4 KiB,
  at most 2 us added to a copy;
* a socket transport (tcp, tls): from 1 MiB, at least 90% of its own
  bulk rate (socket_bulk_256MiB) in the direction the copy takes, a
  pipeline row (both directions' bytes) against the slower direction.
  Device-to-device copies and smaller copies do not cross the wire in
  bulk, and the sweep cannot tell a round trip, so they are not judged.

A guest's transport (vm-tcp, ...) is judged as the transport it names."""

import sweep_table

RATIO = 0.9
ADDED_US = 2.0
SMALL = 4 << 10
WIRE_FROM = 1 << 20
SOCKETS = ("tcp", "tls")
SOCKET_ROW = "socket_bulk_256MiB"


def size_of(metric):
    """The bytes of a sweep or pipeline metric's size, its last part."""
    return sweep_table.size_bytes(metric.rsplit("_", 1)[1])


def judged(metric):
    return metric.startswith(("sweep_", "pipeline_"))


def wire_rate(metric, res):
    """The socket's rate a copy's metric is held to, or None."""
    c2s, s2c = res.get(SOCKET_ROW + "_c2s"), res.get(SOCKET_ROW + "_s2c")
    if c2s is None or s2c is None:
        return None
    if metric.startswith("pipeline_"):
        return min(c2s[0], s2c[0])
    return c2s[0] if "_h2d_" in metric else s2c[0]


def miss(metric, rate, native, res, socket):
    """What the cell misses by, or None: (it counts, description)."""
    size = size_of(metric)
    if socket:
        if size < WIRE_FROM or "_d2d_" in metric:
            return False, None
        ref = wire_rate(metric, res)
        if ref is None or ref <= 0:
            return False, None
        return True, ("%.1f%% of the socket" % (100.0 * rate / ref)
                      if rate < RATIO * ref else None)
    if size >= SMALL or metric.startswith("pipeline_"):
        return True, ("%.1f%% of native" % (100.0 * rate / native)
                      if rate < RATIO * native else None)
    # bytes over GB/s: nanoseconds; a thousandth of that, microseconds.
    added = (size / rate - size / native) / 1e3 if rate > 0 else float("inf")
    return True, "+%.2f us a copy" % added if added > ADDED_US else None


def misses(results, names):
    """{transport: (cells judged, [(metric, description)])} for
    names[1:]; results: {name: {metric: (value, unit)}}, names[0]
    native."""
    native = results[names[0]]
    out = {}
    for name in names[1:]:
        res = results.get(name, {})
        socket = name.split("-")[-1] in SOCKETS
        count, found = 0, []
        for metric in sorted((m for m in native if judged(m)),
                             key=lambda m: (m.rsplit("_", 1)[0], size_of(m))):
            if metric not in res or native[metric][0] <= 0:
                continue
            counts, why = miss(metric, res[metric][0], native[metric][0],
                               res, socket)
            count += counts
            if why is not None:
                found.append((metric, why))
        out[name] = (count, found)
    return out


def lines(results, names):
    """Markdown lines: each transport's cells off the targets."""
    out = ["", "#### Cells off the copy targets (issue 15)", ""]
    for name, (count, found) in misses(results, names).items():
        listed = "; ".join("%s %s" % (m, why) for m, why in found)
        out.append("* **%s**: %d of %d cells%s" % (
            name, len(found), count, ": " + listed if listed else ""))
    return out
