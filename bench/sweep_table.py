"""The tables of bench/sweep.cu's results (bench/run.py): for each kind of
copy, one row per size, the rate through each transport with its ratio
to native and the CPU seconds each GB moved cost (the program and, for
gvs, gvsd and its workers), and below 64 KiB the time of one copy (and
through gvs what it adds); then the pipeline's rows."""

# Below this size a row also gives the time of one copy: its latency is
# what such a copy costs.
LATENCY_BELOW = 64 << 10

# (metric prefix, title) of each table, in order.
TABLES = [
    ("pinned_h2d_sync", "pinned, host to device, cudaMemcpy"),
    ("pinned_h2d_async", "pinned, host to device, cudaMemcpyAsync"),
    ("pinned_d2h_sync", "pinned, device to host, cudaMemcpy"),
    ("pinned_d2h_async", "pinned, device to host, cudaMemcpyAsync"),
    ("pageable_h2d_sync", "pageable, host to device, cudaMemcpy"),
    ("pageable_h2d_async", "pageable, host to device, cudaMemcpyAsync"),
    ("pageable_d2h_sync", "pageable, device to host, cudaMemcpy"),
    ("pageable_d2h_async", "pageable, device to host, cudaMemcpyAsync"),
    ("device_d2d_sync", "device to device, cudaMemcpy"),
    ("device_d2d_async", "device to device, cudaMemcpyAsync"),
]


def is_sweep(metric):
    """Whether a metric is the sweep's (kept out of run.py's main table)."""
    return metric.startswith(("sweep_", "cpu_", "pipeline_"))


def size_bytes(name):
    """'4B', '64KiB', '512MiB' -> bytes."""
    for suffix, shift in (("MiB", 20), ("KiB", 10), ("B", 0)):
        if name.endswith(suffix):
            return int(name[:-len(suffix)]) << shift
    raise ValueError(name)


def rows(results, prefix):
    """The sizes of one table found in results, smallest first."""
    sizes = [m[len(prefix):] for m in results if m.startswith(prefix)]
    return sorted(sizes, key=size_bytes)


def cell(results, rate_metric, cpu_metric, native, size):
    if rate_metric not in results:
        return "-"
    rate = results[rate_metric][0]
    text = "%.3g GB/s" % rate
    if native is not None and native > 0:
        text += " (%.0f%%)" % (100.0 * rate / native)
    if size < LATENCY_BELOW and rate > 0:
        us = size / rate / 1e3
        text += ", %.2f us" % us
        if native is not None and native > 0:
            text += " (+%.2f)" % (us - size / native / 1e3)
    cpu = results.get(cpu_metric)
    if cpu is not None:
        text += ", %.3g s/GB" % cpu[0]
    return text


def table(results, names, title, rate_prefix, cpu_prefix):
    native = results[names[0]]
    out = ["", "#### " + title, "",
           "| size | " + " | ".join(names) + " |",
           "|---|" + "---|" * len(names)]
    for size in rows(native, rate_prefix):
        nat = native[rate_prefix + size][0]
        b = size_bytes(size)
        cells = [cell(native, rate_prefix + size, cpu_prefix + size, None,
                      b)]
        cells += [cell(results[n], rate_prefix + size, cpu_prefix + size,
                       nat, b) for n in names[1:]]
        out.append("| %s | %s |" % (size, " | ".join(cells)))
    return out


def tables(results, names):
    """Markdown lines: a table per kind of copy, then the pipeline's.
    results: {target name: {metric: (value, unit)}}, names[0] native."""
    out = []
    for key, title in TABLES:
        out += table(results, names, title, "sweep_%s_" % key,
                     "cpu_%s_" % key)
    out += table(results, names,
                 "pipeline: blocks in, a kernel, out, on 4 streams "
                 "(GB/s of both ways)", "pipeline_", "cpu_pipeline_")
    return out
