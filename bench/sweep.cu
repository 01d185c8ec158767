// Copies at every size (issue 15, bench/run.py's sweep): for each power
// of two from 4 B to --max (512 MiB by default), host to device and
// device to host from pinned and from pageable memory, and device to
// device, each with cudaMemcpy and with cudaMemcpyAsync on a stream
// waited for at the end; then a pipeline of blocks, each copied in,
// processed by a kernel and copied out on 4 streams.  Each cell is timed
// on the host's clock, as a program sees it, and prints
//   sweep_KIND_DIR_MODE_SIZE  GB/s
//   cpu_KIND_DIR_MODE_SIZE    CPU seconds per GB moved
// the CPU time being this process's and, when GVS_BENCH_SERVER_PID names
// a gvsd on this host, that gvsd's and its workers' too.
//
// usage: sweep [--max BYTES] [--bytes BYTES] [--min-reps N]
// --bytes is what each cell moves at least (256 MiB), in at least
// --min-reps copies (3) and at most 2000 (enough for a small copy's
// latency, which is what its rate is).
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

static size_t max_size = 512u << 20, cell_bytes = 256u << 20;
static int min_reps = 3;
static long server_pid;
// How the server's CPU time was read: processes whose CPU-time clock
// could be read, and those whose /proc ticks had to do.
static long server_clocks, server_ticks;

__global__ void scale(float *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * 2.0f + 1.0f;
}

// One process's user + system seconds: from its CPU-time clock
// (nanoseconds, its ended threads included) where the kernel lets it be
// read, else from /proc's ticks: a cell lasts about ten milliseconds, a
// tick or so, which ticks alone would round to 0, 1 or 2.  -1 when the
// process has gone.
static double one_cpu_s(long pid)
{
    clockid_t clk;
    timespec ts;
    if (clock_getcpuclockid((pid_t)pid, &clk) == 0 &&
        clock_gettime(clk, &ts) == 0) {
        server_clocks++;
        return ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    // After the name's closing parenthesis: utime and stime as the 12th
    // and 13th fields.
    char *p = strrchr(buf, ')');
    unsigned long ut, st;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        return -1;
    server_ticks++;
    return (ut + st) / (double)sysconf(_SC_CLK_TCK);
}

// pid and the processes whose parent it is (gvsd's session workers),
// found by a look through /proc: about a millisecond, long enough for
// gvsd's worker to stop polling and go to sleep, so that the copy timed
// next would pay its wake-up.  Looked for once, and again only when one
// of them has gone.
static long server_pids[64];
static int server_npids;

static void find_server_pids(long pid)
{
    server_npids = 0;
    server_pids[server_npids++] = pid;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[300], buf[1024];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        long ppid;
        if (p != NULL && sscanf(p + 2, "%*c %ld", &ppid) == 1 &&
            ppid == pid && server_npids < 64)
            server_pids[server_npids++] = atol(e->d_name);
    }
    closedir(d);
}

// User + system seconds of the server and its workers; 0 for none.
static double proc_cpu_s(long pid)
{
    if (pid <= 0)
        return 0;
    for (int tries = 0; tries < 2; tries++) {
        if (server_npids == 0 || tries > 0)
            find_server_pids(pid);
        double total = 0;
        int i;
        for (i = 0; i < server_npids; i++) {
            double s = one_cpu_s(server_pids[i]);
            if (s < 0)
                break;
            total += s;
        }
        if (i == server_npids)
            return total;
    }
    return 0;
}

static double cpu_now_s()
{
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6 + proc_cpu_s(server_pid);
}

static void size_name(size_t size, char *out, size_t len)
{
    if (size >= (1u << 20))
        snprintf(out, len, "%zuMiB", size >> 20);
    else if (size >= 1024)
        snprintf(out, len, "%zuKiB", size >> 10);
    else
        snprintf(out, len, "%zuB", size);
}

static void emit(const char *kind, const char *dir, const char *mode,
                 size_t size, double wall, double cpu, int reps)
{
    char name[160], sz[32];
    double bytes = (double)size * reps;
    size_name(size, sz, sizeof(sz));
    snprintf(name, sizeof(name), "sweep_%s_%s_%s_%s", kind, dir, mode, sz);
    report(name, bytes / wall / 1e9, "GB/s");
    snprintf(name, sizeof(name), "cpu_%s_%s_%s_%s", kind, dir, mode, sz);
    report(name, cpu / (bytes / 1e9), "s/GB");
}

// One cell: reps copies of size bytes from src to dst, each with
// cudaMemcpy (sync) or all on stream s and the stream waited for once,
// after the warm-up copy is done.
static void cell(const char *kind, const char *dir, void *dst,
                 const void *src, size_t size, cudaMemcpyKind k,
                 cudaStream_t s)
{
    size_t want = cell_bytes / size;
    int reps = want < (size_t)min_reps ? min_reps
               : want > 2000           ? 2000
                                       : (int)want;
    for (int async = 0; async < 2; async++) {
        CK(cudaMemcpy(dst, src, size, k));
        CK(cudaDeviceSynchronize());
        double c0 = cpu_now_s(), t0 = now_s();
        for (int i = 0; i < reps; i++) {
            if (async)
                CK(cudaMemcpyAsync(dst, src, size, k, s));
            else
                CK(cudaMemcpy(dst, src, size, k));
        }
        // cudaMemcpy between device memory returns before the copy is
        // done: the cell ends when the device has done it.
        if (async)
            CK(cudaStreamSynchronize(s));
        else if (k == cudaMemcpyDeviceToDevice)
            CK(cudaDeviceSynchronize());
        double wall = now_s() - t0, cpu = cpu_now_s() - c0;
        emit(kind, dir, async ? "async" : "sync", size, wall, cpu, reps);
    }
}

// Blocks of block bytes, each copied in, scaled and copied out on one of
// 4 streams in turn, until total bytes went each way: GB/s of both ways.
static void pipeline(char *pinned, char *dev, size_t total, size_t block)
{
    const int ns = 4;
    cudaStream_t s[ns];
    for (int i = 0; i < ns; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    size_t nblocks = total / block, n = block / sizeof(float);
    double c0 = 0, t0 = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            c0 = cpu_now_s();
            t0 = now_s();
        }
        for (size_t b = 0; b < nblocks; b++) {
            char *h = pinned + b * block, *d = dev + b * block;
            cudaStream_t st = s[b % ns];
            CK(cudaMemcpyAsync(d, h, block, cudaMemcpyHostToDevice, st));
            scale<<<(unsigned)((n + 255) / 256), 256, 0, st>>>((float *)d, n);
            CK(cudaMemcpyAsync(h, d, block, cudaMemcpyDeviceToHost, st));
        }
        CK(cudaDeviceSynchronize());
    }
    double wall = now_s() - t0, cpu = cpu_now_s() - c0;
    char sz[32], name[96];
    size_name(block, sz, sizeof(sz));
    snprintf(name, sizeof(name), "pipeline_%s", sz);
    report(name, 2.0 * (double)(nblocks * block) / wall / 1e9, "GB/s");
    snprintf(name, sizeof(name), "cpu_pipeline_%s", sz);
    report(name, cpu / (2.0 * (double)(nblocks * block) / 1e9), "s/GB");
    for (int i = 0; i < ns; i++)
        CK(cudaStreamDestroy(s[i]));
}

static size_t arg_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    else if (*end == 'G')
        v <<= 30;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--max") == 0)
            max_size = arg_size(argv[i + 1]);
        else if (strcmp(argv[i], "--bytes") == 0)
            cell_bytes = arg_size(argv[i + 1]);
        else if (strcmp(argv[i], "--min-reps") == 0)
            min_reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: sweep [--max BYTES] [--bytes BYTES] "
                            "[--min-reps N]\n");
            return 2;
        }
    }
    if (max_size < 4 || min_reps < 1) {
        fprintf(stderr, "sweep: --max of 4 bytes or more, --min-reps of 1 "
                        "or more\n");
        return 2;
    }
    const char *pid = getenv("GVS_BENCH_SERVER_PID");
    server_pid = pid != NULL ? atol(pid) : 0;
    CK(cudaFree(0));
    char *dev, *dev2, *pinned, *pageable;
    CK(cudaMalloc(&dev, max_size));
    CK(cudaMalloc(&dev2, max_size));
    CK(cudaMallocHost(&pinned, max_size));
    pageable = (char *)malloc(max_size);
    if (pageable == NULL)
        return 1;
    memset(pinned, 1, max_size);
    memset(pageable, 1, max_size);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t size = 4; size <= max_size; size *= 2) {
        cell("pinned", "h2d", dev, pinned, size, cudaMemcpyHostToDevice, s);
        cell("pinned", "d2h", pinned, dev, size, cudaMemcpyDeviceToHost, s);
        cell("pageable", "h2d", dev, pageable, size, cudaMemcpyHostToDevice,
             s);
        cell("pageable", "d2h", pageable, dev, size, cudaMemcpyDeviceToHost,
             s);
        cell("device", "d2d", dev2, dev, size, cudaMemcpyDeviceToDevice, s);
    }
    for (size_t block = 64u << 10; block <= (16u << 20) && block <= max_size;
         block *= 4)
        pipeline(pinned, dev, max_size < (256u << 20) ? max_size : 256u << 20,
                 block);
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(pinned));
    CK(cudaFree(dev));
    CK(cudaFree(dev2));
    if (server_pid > 0)
        fprintf(stderr, "sweep: the server's CPU time: %ld reading(s) of "
                        "process CPU clocks, %ld of /proc ticks\n",
                server_clocks, server_ticks);
    free(pageable);
    return 0;
}
