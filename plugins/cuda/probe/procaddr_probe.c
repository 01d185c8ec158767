/*
 * procaddr_probe: records how NVIDIA's real libcuda.so.1 answers
 * cuGetProcAddress / cuGetProcAddress_v2, cuGetExportTable and the
 * INTEGRITY_CHECK export table, so that gvs's libcuda.so.1 frontend can be
 * generated to answer the same (issue 9, items 3 and 4).  Run it on a GPU
 * machine through run.sh; README.md beside this file documents the output.
 *
 * Build: gcc -O2 -std=c11 -D_GNU_SOURCE -I<cuda>/include -I../frontend
 *            procaddr_probe.c ../frontend/md2.c -ldl
 * Only cuda.h's types are used: every driver function is reached through
 * dlsym on the real library, so nothing links against libcuda.
 *
 * Modes (one per process, so that each starts before cuInit):
 *   procaddr_probe [-o FILE] [--dense] EXPORTS [EXTRA_NAMES]
 *   procaddr_probe [-o FILE] --export-tables
 *   procaddr_probe [-o FILE] --integrity VERSION UNIX_SECONDS
 *   procaddr_probe --list-bases EXPORTS
 *   procaddr_probe --selftest
 * EXPORTS / EXTRA_NAMES: one symbol a line; `nm -D --defined-only` output
 * works too (the last word of each line is taken).
 *
 * Output of the procaddr mode (one record a line, first word = kind):
 *   proc NAME FLAGS API PHASE : LO..HI=RC,STATUS,PFN ...
 *     NAME   bare when it is [A-Za-z_][A-Za-z0-9_]*, else a JSON string
 *            with every space and control byte \u-escaped ("" = empty).
 *     FLAGS  0 (DEFAULT), 1 (LEGACY_STREAM), 2 (PER_THREAD_DEFAULT_STREAM).
 *     API    v1 = exported "cuGetProcAddress" (4 arguments),
 *            v2 = "cuGetProcAddress_v2" (with symbolStatus).
 *     PHASE  init = after cuInit(0); noinit = before it, printed only for
 *            the series whose answers differ from init's.
 *     LO..HI inclusive cudaVersion range, * = INT_MIN / INT_MAX; the
 *            ranges of a line are ascending and cover every int.
 *     RC     CUresult (decimal; `rc` lines name them).
 *     STATUS v2's symbolStatus (0 found, 1 not found, 2 version not
 *            sufficient), u = left unwritten, - = v1 (has none).
 *     PFN    the exported symbol pfn was set to (aliases at one address
 *            joined by |, the preferred first), NULL, unset (left
 *            unwritten), ?libcuda+0xOFF (in the driver but no exported
 *            symbol there) or ?0xADDR (elsewhere).
 *   Other records: probe, library, driver_version, cuInit, grid, name,
 *   missing, alias, dladdr, edge, unstable, rc; `#` lines (timings) are
 *   comments.  README.md has the details.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr, syscall */
#endif

#include <cuda.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "md2.h"

#define PROBE_VERSION 1

/* ------------------------------------------------------------------ */
/* Small utilities                                                      */

static _Noreturn void die(int status, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("procaddr_probe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die(1, "out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

struct sbuf {
    char *p;
    size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL,
                          b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            die(1, "vsnprintf failed");
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
        b->p[b->len] = '\0';
    }
}

struct strvec {
    char **v;
    size_t n, cap;
};

static void sv_push(struct strvec *sv, char *s)
{
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 64;
        sv->v = xrealloc(sv->v, sv->cap * sizeof *sv->v);
    }
    sv->v[sv->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts (bytewise, as LC_ALL=C sort) and drops duplicates. */
static void sv_sort_unique(struct strvec *sv)
{
    if (sv->n == 0)
        return;
    qsort(sv->v, sv->n, sizeof *sv->v, cmp_str);
    size_t w = 1;
    for (size_t r = 1; r < sv->n; r++)
        if (strcmp(sv->v[r], sv->v[w - 1]) != 0)
            sv->v[w++] = sv->v[r];
    sv->n = w;
}

/* Symbol names from a file: the last word of each non-empty line that does
 * not start with '#', so both a plain list and `nm -D` output work. */
static void read_names(const char *path, struct strvec *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(2, "cannot read %s: %s", path, strerror(errno));
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        char *w = line + n;
        while (w > line && !isspace((unsigned char)w[-1]))
            w--;
        sv_push(out, xstrdup(w));
    }
    fclose(f);
}

/* The base name the driver's version table is keyed by: a trailing _ptsz or
 * _ptds removed, then a trailing _v<digits>. */
static char *base_name(const char *name)
{
    char *b = xstrdup(name);
    size_t n = strlen(b);
    if (n > 5 && (strcmp(b + n - 5, "_ptsz") == 0 ||
                  strcmp(b + n - 5, "_ptds") == 0))
        b[n -= 5] = '\0';
    size_t d = n;
    while (d > 0 && isdigit((unsigned char)b[d - 1]))
        d--;
    if (d < n && d >= 3 && b[d - 1] == 'v' && b[d - 2] == '_')
        b[d - 2] = '\0';
    return b;
}

/* Writes a symbol name as one whitespace-free token: bare when it is an
 * identifier, else a JSON string. */
static void put_name(struct sbuf *b, const char *name)
{
    if (name == NULL) {
        sb_printf(b, "(null)");
        return;
    }
    int bare = (isalpha((unsigned char)name[0]) || name[0] == '_');
    for (const char *c = name; *c && bare; c++)
        bare = isalnum((unsigned char)*c) || *c == '_';
    if (bare) {
        sb_printf(b, "%s", name);
        return;
    }
    sb_printf(b, "\"");
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if (*c == '"' || *c == '\\')
            sb_printf(b, "\\%c", *c);
        else if (*c <= 0x20 || *c >= 0x7f)
            sb_printf(b, "\\u%04x", *c);
        else
            sb_printf(b, "%c", *c);
    }
    sb_printf(b, "\"");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* The real driver                                                      */

typedef CUresult (*fn_getproc_v1)(const char *, void **, int, cuuint64_t);
typedef CUresult (*fn_getproc_v2)(const char *, void **, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult *);
typedef CUresult (*fn_init)(unsigned int);
typedef CUresult (*fn_driver_version)(int *);
typedef CUresult (*fn_error_name)(CUresult, const char **);
typedef CUresult (*fn_export_table)(const void **, const CUuuid *);
typedef CUresult (*fn_device_count)(int *);
typedef CUresult (*fn_device_get)(CUdevice *, int);
typedef CUresult (*fn_device_uuid)(CUuuid *, CUdevice);
typedef CUresult (*fn_device_attr)(int *, CUdevice_attribute, CUdevice);
/* INTEGRITY_CHECK slot 1 (shared/driver-api-facts.md). */
typedef CUresult (*fn_integrity)(unsigned int, unsigned long long,
                                 unsigned long long *);

#define MAX_SEGMENTS 16

static struct driver {
    void *handle;
    char path[PATH_MAX];
    fn_getproc_v1 getproc_v1;
    fn_getproc_v2 getproc_v2;
    fn_init init;
    fn_driver_version driver_version;
    fn_error_name error_name;
    fn_export_table export_table;
    fn_device_count device_count;
    fn_device_get device_get;
    fn_device_uuid device_uuid_v1, device_uuid_v2;
    fn_device_attr device_attr;
    /* The library's PT_LOAD segments, to tell its code and data from
     * everything else. */
    struct segment {
        uintptr_t start, end;
        int exec;
    } seg[MAX_SEGMENTS];
    int nseg;
    uintptr_t base;
} drv;

/* dlsym into a function pointer without the object-to-function cast
 * warning; NULL when absent. */
static void sym_into(void *fnptr_slot, const char *name)
{
    void *p = dlsym(drv.handle, name);
    memcpy(fnptr_slot, &p, sizeof p);
}

static int find_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    int hit = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && probe >= s && probe < s + ph->p_memsz)
            hit = 1;
    }
    if (!hit)
        return 0;
    drv.base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && drv.nseg < MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        drv.seg[drv.nseg].start = info->dlpi_addr + ph->p_vaddr;
        drv.seg[drv.nseg].end = drv.seg[drv.nseg].start + ph->p_memsz;
        drv.seg[drv.nseg].exec = (ph->p_flags & PF_X) != 0;
        drv.nseg++;
    }
    return 1;
}

/* Loads libcuda.so.1 as an application would; exits 1 when it cannot. */
static void load_driver(void)
{
    drv.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!drv.handle)
        die(1, "cannot load the NVIDIA driver: dlopen(\"libcuda.so.1\"): %s",
            dlerror());
    sym_into(&drv.getproc_v1, "cuGetProcAddress");
    sym_into(&drv.getproc_v2, "cuGetProcAddress_v2");
    sym_into(&drv.init, "cuInit");
    sym_into(&drv.driver_version, "cuDriverGetVersion");
    sym_into(&drv.error_name, "cuGetErrorName");
    sym_into(&drv.export_table, "cuGetExportTable");
    sym_into(&drv.device_count, "cuDeviceGetCount");
    sym_into(&drv.device_get, "cuDeviceGet");
    sym_into(&drv.device_uuid_v1, "cuDeviceGetUuid");
    sym_into(&drv.device_uuid_v2, "cuDeviceGetUuid_v2");
    sym_into(&drv.device_attr, "cuDeviceGetAttribute");
    if (!drv.getproc_v1 || !drv.getproc_v2 || !drv.init ||
        !drv.driver_version || !drv.export_table)
        die(1, "libcuda.so.1 lacks cuGetProcAddress, cuGetProcAddress_v2, "
               "cuInit, cuDriverGetVersion or cuGetExportTable");

    void *anchor;
    memcpy(&anchor, &drv.getproc_v2, sizeof anchor);
    Dl_info info;
    if (dladdr(anchor, &info) && info.dli_fname) {
        if (!realpath(info.dli_fname, drv.path))
            snprintf(drv.path, sizeof drv.path, "%s", info.dli_fname);
    }
    dl_iterate_phdr(find_segments, anchor);
    if (drv.nseg == 0)
        die(1, "cannot find the segments of %s", drv.path);
}

static int in_driver(uintptr_t p, int *exec)
{
    for (int i = 0; i < drv.nseg; i++)
        if (p >= drv.seg[i].start && p < drv.seg[i].end) {
            if (exec)
                *exec = drv.seg[i].exec;
            return 1;
        }
    return 0;
}

/* Every CUresult the probe saw, for the `rc` legend. */
static struct {
    int v[256];
    int n;
} rcs_seen;

static void note_rc(int rc)
{
    for (int i = 0; i < rcs_seen.n; i++)
        if (rcs_seen.v[i] == rc)
            return;
    if (rcs_seen.n < (int)(sizeof rcs_seen.v / sizeof rcs_seen.v[0]))
        rcs_seen.v[rcs_seen.n++] = rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void print_rc_legend(void)
{
    qsort(rcs_seen.v, (size_t)rcs_seen.n, sizeof rcs_seen.v[0], cmp_int);
    for (int i = 0; i < rcs_seen.n; i++) {
        const char *name = NULL;
        if (drv.error_name &&
            drv.error_name((CUresult)rcs_seen.v[i], &name) != CUDA_SUCCESS)
            name = NULL;
        printf("rc %d %s\n", rcs_seen.v[i], name ? name : "?");
    }
}

/* Runs fn(arg) in a child process, so that a crash or hang of the driver on
 * odd arguments is recorded instead of ending the probe.  Returns what the
 * child printed, followed by a line "crash:SIG", "hang" (still running
 * after timeout_s) or "exit:N" when fn did not return.  fn's result is a
 * CUresult, noted for the legend.  Call it only before cuInit: a child
 * forked after it would hold a driver whose threads did not follow. */
static char *isolated(int (*fn)(void *), void *arg, unsigned timeout_s)
{
    static int *shared_rc;
    if (!shared_rc) {
        shared_rc = mmap(NULL, sizeof *shared_rc, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared_rc == MAP_FAILED)
            die(1, "mmap: %s", strerror(errno));
    }
    int p[2];
    if (pipe(p) != 0)
        die(1, "pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die(1, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        if (dup2(p[1], fileno(stdout)) < 0)
            _exit(126);
        alarm(timeout_s);
        *shared_rc = fn(arg);
        fflush(stdout);
        _exit(0);
    }
    close(p[1]);
    struct sbuf out = {0};
    sb_printf(&out, "%s", ""); /* never NULL, even when nothing comes */
    char chunk[4096];
    ssize_t got;
    while ((got = read(p[0], chunk, sizeof chunk)) != 0) {
        if (got < 0 && errno != EINTR)
            die(1, "read: %s", strerror(errno));
        if (got > 0)
            sb_printf(&out, "%.*s", (int)got, chunk);
    }
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            die(1, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        note_rc(*shared_rc);
    else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        sb_printf(&out, "hang\n");
    else if (WIFSIGNALED(st))
        sb_printf(&out, "crash:%d\n", WTERMSIG(st));
    else
        sb_printf(&out, "exit:%d\n", WEXITSTATUS(st));
    return out.p;
}

/* ------------------------------------------------------------------ */
/* Exported names and their addresses                                   */

enum { RANK_EXPORT, RANK_EXTRA, RANK_DLADDR };

struct sym {
    uintptr_t addr;
    int rank;
    const char *name;
};

static struct {
    struct sym *v;
    size_t n, cap;
} syms;

static void syms_push(uintptr_t addr, int rank, const char *name)
{
    if (syms.n == syms.cap) {
        syms.cap = syms.cap ? syms.cap * 2 : 1024;
        syms.v = xrealloc(syms.v, syms.cap * sizeof *syms.v);
    }
    syms.v[syms.n++] = (struct sym){addr, rank, name};
}

/* By address; within one address the preferred name first: from the
 * export list, then the extra list, then only known to dladdr. */
static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

/* First index of addr in syms, or syms.n. */
static size_t syms_find(uintptr_t addr)
{
    size_t lo = 0, hi = syms.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (syms.v[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < syms.n && syms.v[lo].addr == addr ? lo : syms.n;
}

/* Resolves every listed name in the driver and adds, for each address, the
 * name dladdr gives when the lists lack it: dladdr names one symbol per
 * address, so aliases only show through the lists. */
static void build_symbols(const struct strvec *exports,
                          const struct strvec *extras, struct strvec *missing)
{
    const struct strvec *lists[2] = {exports, extras};
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i < lists[r]->n; i++) {
            void *a = dlsym(drv.handle, lists[r]->v[i]);
            if (a && in_driver((uintptr_t)a, NULL))
                syms_push((uintptr_t)a, r, lists[r]->v[i]);
            else if (r == RANK_EXPORT)
                sv_push(missing, lists[r]->v[i]);
        }
    qsort(syms.v, syms.n, sizeof *syms.v, cmp_sym);
    size_t listed = syms.n;
    for (size_t i = 0; i < listed; i++) {
        if (i > 0 && syms.v[i].addr == syms.v[i - 1].addr)
            continue;
        Dl_info info;
        if (!dladdr((void *)syms.v[i].addr, &info) || !info.dli_sname ||
            (uintptr_t)info.dli_saddr != syms.v[i].addr)
            continue;
        int known = 0;
        for (size_t j = i; j < listed && syms.v[j].addr == syms.v[i].addr;
             j++)
            known |= strcmp(syms.v[j].name, info.dli_sname) == 0;
        if (!known)
            syms_push(syms.v[i].addr, RANK_DLADDR, xstrdup(info.dli_sname));
    }
    qsort(syms.v, syms.n, sizeof *syms.v, cmp_sym);
}

/* Writes what a returned function pointer is (see PFN at the top). */
static void put_pfn(struct sbuf *b, void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (p == NULL) {
        sb_printf(b, "NULL");
        return;
    }
    size_t i = syms_find(a);
    if (i < syms.n) {
        for (size_t j = i; j < syms.n && syms.v[j].addr == a; j++)
            sb_printf(b, "%s%s", j > i ? "|" : "", syms.v[j].name);
        return;
    }
    Dl_info info;
    if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p &&
        in_driver(a, NULL)) {
        sb_printf(b, "%s", info.dli_sname);
        return;
    }
    if (in_driver(a, NULL))
        sb_printf(b, "?libcuda+0x%jx", (uintmax_t)(a - drv.base));
    else
        sb_printf(b, "?0x%jx", (uintmax_t)a);
}

/* ------------------------------------------------------------------ */
/* cuGetProcAddress                                                     */

enum { API_V1, API_V2, NAPI };
static const char *const api_name[NAPI] = {"v1", "v2"};

/* Values the driver never writes, to tell "left unwritten" apart. */
static char pfn_sentinel_object;
#define PFN_UNSET ((void *)&pfn_sentinel_object)
#define STATUS_UNSET 0x5e5e
#define STATUS_NONE (-1) /* v1 has no status */

struct outcome {
    int rc;
    int status;
    void *pfn;
};

static unsigned long long ncalls;

static struct outcome query(int api, const char *name, int version,
                            cuuint64_t flags)
{
    struct outcome o = {0, STATUS_NONE, PFN_UNSET};
    ncalls++;
    if (api == API_V1) {
        o.rc = drv.getproc_v1(name, &o.pfn, version, flags);
    } else {
        CUdriverProcAddressQueryResult st =
            (CUdriverProcAddressQueryResult)STATUS_UNSET;
        o.rc = drv.getproc_v2(name, &o.pfn, version, flags, &st);
        o.status = (int)st;
    }
    note_rc(o.rc);
    return o;
}

static int same_outcome(const struct outcome *a, const struct outcome *b)
{
    return a->rc == b->rc && a->status == b->status && a->pfn == b->pfn;
}

static void put_outcome(struct sbuf *b, const struct outcome *o)
{
    sb_printf(b, "%d,", o->rc);
    if (o->status == STATUS_NONE)
        sb_printf(b, "-,");
    else if (o->status == STATUS_UNSET)
        sb_printf(b, "u,");
    else
        sb_printf(b, "%d,", o->status);
    if (o->pfn == PFN_UNSET)
        sb_printf(b, "unset");
    else
        put_pfn(b, o->pfn);
}

static void put_version(struct sbuf *b, long long v)
{
    if (v == INT_MIN || v == INT_MAX)
        sb_printf(b, "*");
    else
        sb_printf(b, "%lld", v);
}

/* Versions probed for every series.  The answer is a step function of the
 * version; between two probed versions with different answers the exact
 * step is found by bisection, so the ranges printed are exact as long as
 * no answer appears and disappears again between two neighbours of the
 * grid.  "releases" holds every x.y0 release (x = 1..13, y = 0..9) and the
 * extremes; --dense every multiple of 10 up to 14000, to check that. */
static struct {
    int *v;
    size_t n;
    const char *name;
} grid;

static void grid_add(int v)
{
    grid.v = xrealloc(grid.v, (grid.n + 1) * sizeof *grid.v);
    grid.v[grid.n++] = v;
}

static void build_grid(int dense)
{
    grid.name = dense ? "dense" : "releases";
    grid_add(INT_MIN);
    grid_add(-1);
    if (dense) {
        for (int v = 0; v <= 14000; v += 10)
            grid_add(v);
    } else {
        grid_add(0);
        grid_add(1);
        grid_add(999);
        for (int major = 1; major <= 13; major++)
            for (int minor = 0; minor <= 9; minor++)
                grid_add(major * 1000 + minor * 10);
        grid_add(14000);
    }
    grid_add(20000);
    grid_add(99999);
    grid_add(INT_MAX);
}

/* Bisection calls one series may spend: a driver whose answers are not a
 * step function (garbage in an unwritten status, say) would otherwise make
 * refine() ask every version of a range. */
#define SERIES_REFINE_BUDGET 4096

struct series {
    int api;
    const char *name;
    cuuint64_t flags;
    int refine_left;
    struct point {
        long long v;
        struct outcome o;
    } *pt;
    size_t n, cap;
};

static void series_push(struct series *s, long long v, struct outcome o)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->pt = xrealloc(s->pt, s->cap * sizeof *s->pt);
    }
    s->pt[s->n++] = (struct point){v, o};
}

static struct outcome series_ask(const struct series *s, long long v)
{
    return query(s->api, s->name, (int)v, s->flags);
}

/* Appends the points strictly between a and b needed to place every step
 * between them exactly. */
static void refine(struct series *s, long long a, struct outcome oa,
                   long long b, struct outcome ob)
{
    if (b - a <= 1 || same_outcome(&oa, &ob) || s->refine_left <= 0)
        return;
    s->refine_left--;
    long long m = a + (b - a) / 2;
    struct outcome om = series_ask(s, m);
    refine(s, a, oa, m, om);
    series_push(s, m, om);
    refine(s, m, om, b, ob);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static struct strvec unstable_notes;
static size_t unstable_series;
#define MAX_UNSTABLE_NOTES 4 /* a series */

/* Records that a series is not the step function its line shows. */
static void note_unstable(const char *name, unsigned flags, int api,
                          const char *phase, struct sbuf *why)
{
    struct sbuf note = {0};
    sb_printf(&note, "unstable ");
    put_name(&note, name);
    sb_printf(&note, " %u %s %s : %s", flags, api_name[api], phase, why->p);
    sv_push(&unstable_notes, note.p);
    free(why->p);
}

/* One series as "LO..HI=OUTCOME ..."; re-asks two pseudo-random versions
 * inside each range of more than two versions and records an `unstable`
 * note where the answer is not the range's. */
static char *run_series(int api, const char *name, unsigned flags,
                        const char *phase)
{
    struct series s = {.api = api, .name = name, .flags = flags,
                       .refine_left = SERIES_REFINE_BUDGET};
    struct outcome prev = series_ask(&s, grid.v[0]);
    series_push(&s, grid.v[0], prev);
    for (size_t i = 1; i < grid.n; i++) {
        struct outcome o = series_ask(&s, grid.v[i]);
        refine(&s, grid.v[i - 1], prev, grid.v[i], o);
        series_push(&s, grid.v[i], o);
        prev = o;
    }

    uint64_t seed = (uint64_t)flags * 2 + (uint64_t)api;
    for (const char *c = name; *c; c++)
        seed = seed * 131 + (unsigned char)*c;

    struct sbuf out = {0};
    int mismatches = 0;
    for (size_t i = 0; i < s.n;) {
        size_t j = i + 1;
        while (j < s.n && same_outcome(&s.pt[j].o, &s.pt[i].o))
            j++;
        long long lo = s.pt[i].v;
        long long hi = j < s.n ? s.pt[j].v - 1 : INT_MAX;
        for (int k = 0; k < 2 && hi - lo >= 2; k++) {
            long long v = lo + 1 + (long long)(splitmix(&seed) %
                                               (uint64_t)(hi - lo - 1));
            struct outcome o = series_ask(&s, v);
            if (!same_outcome(&o, &s.pt[i].o) &&
                ++mismatches <= MAX_UNSTABLE_NOTES) {
                struct sbuf why = {0};
                sb_printf(&why, "version %lld answers ", v);
                put_outcome(&why, &o);
                sb_printf(&why, ", not its range's ");
                put_outcome(&why, &s.pt[i].o);
                note_unstable(name, flags, api, phase, &why);
            }
        }
        sb_printf(&out, "%s", i ? " " : "");
        put_version(&out, lo);
        sb_printf(&out, "..");
        put_version(&out, hi);
        sb_printf(&out, "=");
        put_outcome(&out, &s.pt[i].o);
        i = j;
    }
    if (mismatches > MAX_UNSTABLE_NOTES) {
        struct sbuf why = {0};
        sb_printf(&why, "%d more versions answer unlike their ranges",
                  mismatches - MAX_UNSTABLE_NOTES);
        note_unstable(name, flags, api, phase, &why);
    }
    if (s.refine_left <= 0) {
        struct sbuf why = {0};
        sb_printf(&why, "more than %d bisection steps; ranges approximate",
                  SERIES_REFINE_BUDGET);
        note_unstable(name, flags, api, phase, &why);
    }
    unstable_series += mismatches > 0 || s.refine_left <= 0;
    free(s.pt);
    return out.p;
}

/* Names that no driver exports: the not-found answers.  A base name with a
 * version suffix beyond the newest, suffixes a name does not have, case and
 * whitespace variants, other libraries' names. */
static const char *const made_up_names[] = {
    "",
    " cuInit",
    "cu",
    "cuCtxCreate_v5",
    "cuGetProcAddress_v3",
    "cuInit_v2",
    "cuMemAllocAsync_ptds",
    "cuMemAlloc ",
    "cuMemAlloc_ptsz",
    "cuMemAlloc_v9",
    "cuMemcpy_ptsz",
    "cuNotARealFunction",
    "cuStreamGetCaptureInfo_v4",
    "cudaMalloc",
    "cumemalloc",
    "nvmlInit_v2",
};

enum { KIND_EXPORT = 1, KIND_BASE = 2, KIND_EXTRA = 4, KIND_MADE_UP = 8 };

struct name_entry {
    const char *name;
    unsigned kinds;
};

static int cmp_name_entry(const void *a, const void *b)
{
    return strcmp(((const struct name_entry *)a)->name,
                  ((const struct name_entry *)b)->name);
}

static void add_name(struct name_entry **v, size_t *n, const char *name,
                     unsigned kind)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (struct name_entry){name, kind};
}

/* Sorted, one entry per name with every kind it has. */
static size_t merge_names(struct name_entry *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_name_entry);
    size_t w = 0;
    for (size_t r = 0; r < n; r++) {
        if (w > 0 && strcmp(v[w - 1].name, v[r].name) == 0)
            v[w - 1].kinds |= v[r].kinds;
        else
            v[w++] = v[r];
    }
    return w;
}

/* Edge cases: NULL arguments and flags outside {0, 1, 2}. */
struct edge {
    int api;
    const char *label; /* plain, null_pfn, null_status */
    const char *name;
    int version;
    cuuint64_t flags;
};

static struct outcome ask_edge(const struct edge *e)
{
    struct outcome o = {0, STATUS_NONE, PFN_UNSET};
    void **pfn = strcmp(e->label, "null_pfn") == 0 ? NULL : &o.pfn;
    if (e->api == API_V1) {
        o.rc = drv.getproc_v1(e->name, pfn, e->version, e->flags);
    } else {
        CUdriverProcAddressQueryResult st =
            (CUdriverProcAddressQueryResult)STATUS_UNSET;
        int no_status = strcmp(e->label, "null_status") == 0;
        o.rc = drv.getproc_v2(e->name, pfn, e->version, e->flags,
                              no_status ? NULL : &st);
        o.status = no_status ? STATUS_NONE : (int)st;
    }
    return o;
}

static int edge_child(void *arg)
{
    struct outcome o = ask_edge(arg);
    struct sbuf b = {0};
    put_outcome(&b, &o);
    printf("%s\n", b.p);
    return o.rc;
}

/* Appends one `edge` record a case to out.  Before cuInit every case runs
 * isolated; after it (no forking then) only those whose arguments are all
 * valid, in this process. */
static void run_edges(const char *phase, struct strvec *out)
{
    static const cuuint64_t odd_flags[] = {3, 4, 8, 1ull << 32, ~0ull};
    static const char *const flag_names[] = {"cuMemcpy", "cuMemAlloc",
                                             "cuNotARealFunction"};
    struct edge e[64];
    int n = 0;
    for (int api = 0; api < NAPI; api++) {
        e[n++] = (struct edge){api, "plain", NULL, 13000, 0};
        e[n++] = (struct edge){api, "null_pfn", "cuMemAlloc", 13000, 0};
        for (size_t i = 0; i < sizeof flag_names / sizeof *flag_names; i++)
            for (size_t f = 0; f < sizeof odd_flags / sizeof *odd_flags; f++)
                e[n++] = (struct edge){api, "plain", flag_names[i], 13000,
                                       odd_flags[f]};
    }
    e[n++] = (struct edge){API_V2, "null_status", "cuMemAlloc", 13000, 0};
    e[n++] = (struct edge){API_V2, "null_status", "cuNotARealFunction",
                           13000, 0};
    e[n++] = (struct edge){API_V2, "null_status", "cuMemAllocAsync", 11000,
                           0};
    int forking = strcmp(phase, "noinit") == 0;
    for (int i = 0; i < n; i++) {
        int valid = e[i].name && strcmp(e[i].label, "plain") == 0;
        if (!forking && !valid)
            continue;
        struct sbuf b = {0};
        sb_printf(&b, "edge %s %s %s ", phase, api_name[e[i].api],
                  e[i].label);
        put_name(&b, e[i].name);
        sb_printf(&b, " %d %llu : ", e[i].version,
                  (unsigned long long)e[i].flags);
        if (forking) {
            char *text = isolated(edge_child, &e[i], 5);
            size_t len = strlen(text);
            while (len > 0 && text[len - 1] == '\n')
                text[--len] = '\0';
            sb_printf(&b, "%s", text);
            free(text);
        } else {
            struct outcome o = ask_edge(&e[i]);
            note_rc(o.rc);
            put_outcome(&b, &o);
        }
        sv_push(out, b.p);
    }
}

static int procaddr_mode(const char *exports_path, const char *extras_path,
                         int dense)
{
    struct strvec exports = {0}, extras = {0}, missing = {0};
    read_names(exports_path, &exports);
    sv_sort_unique(&exports);
    if (extras_path) {
        read_names(extras_path, &extras);
        sv_sort_unique(&extras);
    }
    if (exports.n == 0)
        die(2, "%s lists no names", exports_path);

    load_driver();
    int driver_version = -1;
    int dv_rc = drv.driver_version(&driver_version);

    build_symbols(&exports, &extras, &missing);
    build_grid(dense);

    struct name_entry *names = NULL;
    size_t nnames = 0;
    for (size_t i = 0; i < exports.n; i++) {
        add_name(&names, &nnames, exports.v[i], KIND_EXPORT);
        add_name(&names, &nnames, base_name(exports.v[i]), KIND_BASE);
    }
    for (size_t i = 0; i < extras.n; i++)
        add_name(&names, &nnames, extras.v[i], KIND_EXTRA);
    for (size_t i = 0; i < sizeof made_up_names / sizeof *made_up_names; i++)
        add_name(&names, &nnames, made_up_names[i], KIND_MADE_UP);
    nnames = merge_names(names, nnames);

    /* text[phase][name][flags][api]; phase 0 = noinit, 1 = init. */
    size_t per_phase = nnames * 3 * NAPI;
    char **text = xrealloc(NULL, 2 * per_phase * sizeof *text);
    double t_phase[2];
    unsigned long long calls_phase[2];
    int init_rc = 0;
    struct strvec edges = {0};
    for (int phase = 0; phase < 2; phase++) {
        if (phase == 1)
            init_rc = drv.init(0);
        run_edges(phase ? "init" : "noinit", &edges);
        double t0 = now_s();
        unsigned long long c0 = ncalls;
        for (size_t i = 0; i < nnames; i++)
            for (unsigned f = 0; f < 3; f++)
                for (int api = 0; api < NAPI; api++)
                    text[phase * per_phase + (i * 3 + f) * NAPI +
                         (size_t)api] =
                        run_series(api, names[i].name, f,
                                   phase ? "init" : "noinit");
        t_phase[phase] = now_s() - t0;
        calls_phase[phase] = ncalls - c0;
    }

    printf("# gvs cuGetProcAddress probe; format: "
           "plugins/cuda/probe/README.md\n");
    printf("probe procaddr %d\n", PROBE_VERSION);
    printf("library %s\n", drv.path);
    printf("driver_version %d rc %d\n", driver_version, dv_rc);
    printf("cuInit %d\n", init_rc);
    printf("grid %s %zu\n", grid.name, grid.n);
    for (size_t i = 0; i < missing.n; i++)
        printf("missing %s\n", missing.v[i]);
    for (size_t i = 0; i < syms.n;) {
        size_t j = i + 1;
        while (j < syms.n && syms.v[j].addr == syms.v[i].addr)
            j++;
        if (j - i > 1) {
            printf("alias");
            for (size_t k = i; k < j; k++)
                printf(" %s", syms.v[k].name);
            printf("\n");
        }
        i = j;
    }
    for (size_t i = 0; i < exports.n; i++) {
        void *a = dlsym(drv.handle, exports.v[i]);
        Dl_info info;
        if (a && dladdr(a, &info) && info.dli_sname &&
            strcmp(info.dli_sname, exports.v[i]) != 0)
            printf("dladdr %s %s%s\n", exports.v[i], info.dli_sname,
                   info.dli_saddr == a ? "" : " (not at the symbol)");
    }
    for (size_t i = 0; i < nnames; i++) {
        struct sbuf b = {0};
        sb_printf(&b, "name ");
        put_name(&b, names[i].name);
        static const char *const kind_word[] = {"export", "base", "extra",
                                                "madeup"};
        const char *sep = " ";
        for (int k = 0; k < 4; k++)
            if (names[i].kinds & (1u << k)) {
                sb_printf(&b, "%s%s", sep, kind_word[k]);
                sep = ",";
            }
        puts(b.p);
        free(b.p);
    }
    size_t noinit_differs = 0;
    for (size_t i = 0; i < nnames; i++)
        for (unsigned f = 0; f < 3; f++)
            for (int api = 0; api < NAPI; api++) {
                size_t k = (i * 3 + f) * NAPI + (size_t)api;
                for (int phase = 1; phase >= 0; phase--) {
                    const char *t = text[(size_t)phase * per_phase + k];
                    if (phase == 0 && strcmp(t, text[per_phase + k]) == 0)
                        continue;
                    noinit_differs += phase == 0;
                    struct sbuf b = {0};
                    sb_printf(&b, "proc ");
                    put_name(&b, names[i].name);
                    sb_printf(&b, " %u %s %s : %s", f, api_name[api],
                              phase ? "init" : "noinit", t);
                    puts(b.p);
                    free(b.p);
                }
            }
    for (size_t i = 0; i < edges.n; i++)
        puts(edges.v[i]);
    for (size_t i = 0; i < unstable_notes.n; i++)
        puts(unstable_notes.v[i]);
    print_rc_legend();
    for (int phase = 0; phase < 2; phase++)
        printf("# %s: %llu calls in %.3f s, %.3f us a call\n",
               phase ? "init" : "noinit", calls_phase[phase], t_phase[phase],
               calls_phase[phase] ? t_phase[phase] * 1e6 /
                                        (double)calls_phase[phase]
                                  : 0.0);
    printf("# names %zu, series %zu a phase, noinit series differing %zu, "
           "unstable series %zu\n",
           nnames, per_phase, noinit_differs, unstable_series);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Export tables                                                        */

struct uuid_entry {
    const char *name;
    const char *text; /* bytes in memory order, as in the facts file */
};

#define CUDART_INTERFACE_UUID "6BD5FB6C-5BF4-E74A-8987-D93912FD9DF9"
#define INTEGRITY_CHECK_UUID "D4082055-BDE6-704B-8D34-BA123C66E1F2"

static const struct uuid_entry known_tables[] = {
    {"CUDART_INTERFACE", CUDART_INTERFACE_UUID},
    {"TOOLS_TLS", "42D85A81-23F6-CB47-8298-F6E78A3AECDC"},
    {"TOOLS_RUNTIME_CALLBACK_HOOKS", "A094798C-2E74-2E74-93F2-0800200C0A66"},
    {"CONTEXT_LOCAL_STORAGE_V0301", "C693336E-1121-DF11-A8C3-68F355D89593"},
    {"CONTEXT_CHECKS", "263E8860-7CD2-6143-92F6-BBD5006DFA7E"},
    {"INTEGRITY_CHECK", INTEGRITY_CHECK_UUID},
    {"CUBLAS_INIT", "F8CFF951-2146-8B4E-B9E2-FB469E7C0DD9"},
    {"CUBLAS_CUFFT", "21318C60-9714-3248-8CA6-41FF7324C8F2"},
    {"CTX_CREATE_BYPASS", "0CA50B8C-1004-929A-89A7-D0DF10E77286"},
    {"HEAP_ACCESS", "195BCBF4-D67D-024A-ACC5-1D29CEA631AE"},
    {"DEVICE_EXTENDED_RT", "B10541E1-F7C7-C74A-9F64-F223BE99F1E2"},
    /* Not-found answers: all zero, and fixed arbitrary bytes. */
    {"zero", "00000000-0000-0000-0000-000000000000"},
    {"random", "5A17C0DE-9E3B-4F1D-A6C2-7B31E08D44F9"},
};
#define NKNOWN (sizeof known_tables / sizeof known_tables[0])

/* The module-iterator table's UUID is known only as starting 6E163FBE;
 * the bytes may also lie the other way round (a GUID's first group). */
static const uint8_t module_iterator_prefix[2][4] = {
    {0x6e, 0x16, 0x3f, 0xbe},
    {0xbe, 0x3f, 0x16, 0x6e},
};

static void parse_uuid(const char *text, CUuuid *u)
{
    int n = 0;
    for (const char *c = text; *c && n < 32; c++) {
        if (*c == '-')
            continue;
        int d = isdigit((unsigned char)*c) ? *c - '0'
                                           : tolower((unsigned char)*c) -
                                                 'a' + 10;
        if (n % 2 == 0)
            u->bytes[n / 2] = (char)(d << 4);
        else
            u->bytes[n / 2] = (char)(u->bytes[n / 2] | d);
        n++;
    }
    if (n != 32)
        die(1, "bad UUID %s", text);
}

static void put_uuid(struct sbuf *b, const CUuuid *u)
{
    for (int i = 0; i < 16; i++)
        sb_printf(b, "%s%02X", (i == 4 || i == 6 || i == 8 || i == 10)
                                   ? "-"
                                   : "",
                  (unsigned char)u->bytes[i]);
}

/* The first 3 groups byte-swapped: how a UUID written as a Windows GUID
 * lies in memory, in case a facts entry was copied in that form. */
static CUuuid guid_swapped(const CUuuid *u)
{
    CUuuid s = *u;
    static const int perm[8] = {3, 2, 1, 0, 5, 4, 7, 6};
    for (int i = 0; i < 8; i++)
        s.bytes[i] = u->bytes[perm[i]];
    return s;
}

/* Reads 8 bytes that may not be mapped: through a pipe, which fails with
 * EFAULT instead of faulting. */
static int safe_pipe[2] = {-1, -1};

static int safe_read_u64(uintptr_t addr, uint64_t *v)
{
    if (safe_pipe[0] < 0 && pipe(safe_pipe) != 0)
        die(1, "pipe: %s", strerror(errno));
    if (write(safe_pipe[1], (const void *)addr, 8) != 8)
        return -1;
    return read(safe_pipe[0], v, 8) == 8 ? 0 : -1;
}

/* One character a slot: 0 NULL, F code of the driver, D data of the
 * driver, V a small value (< 0x10000), O any other value, ? unreadable. */
static char slot_class(uint64_t v)
{
    int exec = 0;
    if (v == 0)
        return '0';
    if (in_driver((uintptr_t)v, &exec))
        return exec ? 'F' : 'D';
    return v < 0x10000 ? 'V' : 'O';
}

static void put_addr(struct sbuf *b, const void *p)
{
    if (p == NULL)
        sb_printf(b, "NULL");
    else if (in_driver((uintptr_t)p, NULL))
        sb_printf(b, "libcuda+0x%jx", (uintmax_t)((uintptr_t)p - drv.base));
    else
        sb_printf(b, "0x%jx", (uintmax_t)(uintptr_t)p);
}

/* Slot 0 below this (and a multiple of 8) is taken for the table's size:
 * the largest seen on driver 580 is 6456 bytes, and no code or data
 * pointer is that small. */
#define TABLE_SIZE_MAX 65536

/* Prints one `table` record (README.md); returns the table or NULL. */
static const void *probe_table(const char *phase, const char *label,
                               const CUuuid *u)
{
    static char sentinel_object;
    const void *t = &sentinel_object;
    int rc = drv.export_table(&t, u);
    note_rc(rc);

    struct sbuf b = {0};
    sb_printf(&b, "table %s ", phase);
    put_uuid(&b, u);
    sb_printf(&b, " %s rc=%d ptr=", label, rc);
    if (t == &sentinel_object) {
        sb_printf(&b, "unset");
        t = NULL;
    } else {
        put_addr(&b, t);
    }
    uint64_t slot0;
    if (t && rc == CUDA_SUCCESS && safe_read_u64((uintptr_t)t, &slot0) == 0) {
        sb_printf(&b, " slot0=0x%jx", (uintmax_t)slot0);
        int sized = slot0 >= 8 && slot0 < TABLE_SIZE_MAX && slot0 % 8 == 0;
        size_t nslots = sized ? (size_t)slot0 / 8 : 32;
        size_t nonnull = 0;
        struct sbuf map = {0}, small = {0};
        sb_printf(&map, "%s", ""); /* a table of slot 0 alone maps to "" */
        for (size_t i = sized ? 1 : 0; i < nslots; i++) {
            uint64_t v;
            char c = safe_read_u64((uintptr_t)t + 8 * i, &v) == 0
                         ? slot_class(v)
                         : '?';
            sb_printf(&map, "%c", c);
            nonnull += c != '0' && c != '?';
            if (c == 'V')
                sb_printf(&small, "%s%zu:%ju", small.len ? "," : "", i,
                          (uintmax_t)v);
        }
        if (sized)
            sb_printf(&b, " size=%ju nonnull=%zu slots=%s", (uintmax_t)slot0,
                      nonnull, map.p);
        else
            sb_printf(&b, " size=- first32=%s", map.p);
        if (small.len)
            sb_printf(&b, " small=%s", small.p);
        free(map.p);
        free(small.p);
    }
    puts(b.p);
    free(b.p);
    return rc == CUDA_SUCCESS ? t : NULL;
}

/* The readable parts of the driver's segments, from /proc/self/maps. */
struct range {
    uintptr_t start, end;
};

static size_t readable_ranges(struct range *out, size_t max)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    size_t n = 0;
    char line[PATH_MAX + 128];
    while (n < max && fgets(line, sizeof line, f)) {
        uintmax_t s, e;
        char perms[8];
        if (sscanf(line, "%jx-%jx %7s", &s, &e, perms) != 3 ||
            perms[0] != 'r')
            continue;
        for (int i = 0; i < drv.nseg && n < max; i++) {
            uintptr_t a = s > drv.seg[i].start ? s : drv.seg[i].start;
            uintptr_t z = e < drv.seg[i].end ? e : drv.seg[i].end;
            if (a < z)
                out[n++] = (struct range){a, z};
        }
    }
    fclose(f);
    return n;
}

/* The candidate UUIDs already asked for: an open-addressing set. */
#define TRIED_SLOTS (1u << 17)

static struct {
    CUuuid v[TRIED_SLOTS];
    unsigned char used[TRIED_SLOTS];
    size_t n;
} tried;

/* Adds u; 1 when it was there already, or when the set is full (so that
 * the search stops asking). */
static int tried_before(const CUuuid *u)
{
    if (tried.n >= TRIED_SLOTS / 2)
        return 1;
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 16; i++)
        h = (h ^ (unsigned char)u->bytes[i]) * 1099511628211ull;
    for (size_t i = h & (TRIED_SLOTS - 1);; i = (i + 1) & (TRIED_SLOTS - 1)) {
        if (!tried.used[i]) {
            tried.used[i] = 1;
            tried.v[i] = *u;
            tried.n++;
            return 0;
        }
        if (memcmp(&tried.v[i], u, sizeof *u) == 0)
            return 1;
    }
}

#define MAX_DISCOVERED 1024

static struct {
    CUuuid uuid;
    char how[32];
} discovered[MAX_DISCOVERED];
static size_t ndiscovered;

static void try_candidate(const CUuuid *u, const char *how)
{
    static const CUuuid zero;
    if (memcmp(u, &zero, sizeof zero) == 0 || tried_before(u))
        return;
    const void *t = NULL;
    if (drv.export_table(&t, u) != CUDA_SUCCESS ||
        ndiscovered == MAX_DISCOVERED)
        return;
    discovered[ndiscovered].uuid = *u;
    snprintf(discovered[ndiscovered].how, sizeof discovered[0].how,
             "discovered:%s", how);
    ndiscovered++;
}

/* Looks for the tables the facts do not list in full: the UUIDs the driver
 * knows lie in its image next to each other (driver 580: one array, 16
 * bytes apart), so every 16 bytes at a few strides around each known UUID
 * are tried, and every 16 bytes starting with the module iterator's
 * 6E163FBE either way round. */
static void discover_tables(const CUuuid *found, size_t nfound)
{
    static struct range r[256];
    size_t nr = readable_ranges(r, 256);
    static const int strides[] = {16, 24, 32, 40, 48, 56, 64};
    enum { STRIDE_STEPS = 256 };

    for (size_t k = 0; k < nfound; k++)
        tried_before(&found[k]);

    for (size_t k = 0; k < nfound; k++) {
        struct sbuf where = {0};
        int hits = 0;
        for (size_t ri = 0; ri < nr; ri++) {
            const uint8_t *p = (const uint8_t *)r[ri].start;
            size_t len = r[ri].end - r[ri].start;
            const uint8_t *h;
            while (len >= 16 && (h = memmem(p, len, &found[k], 16))) {
                len -= (size_t)(h + 1 - p);
                p = h + 1;
                if (++hits > 8)
                    continue;
                sb_printf(&where, " libcuda+0x%jx",
                          (uintmax_t)((uintptr_t)h - drv.base));
                for (size_t si = 0; si < sizeof strides / sizeof *strides;
                     si++)
                    for (int step = -STRIDE_STEPS; step <= STRIDE_STEPS;
                         step++) {
                        uintptr_t c = (uintptr_t)h +
                                      (uintptr_t)((intptr_t)step *
                                                  strides[si]);
                        if (step == 0 || c < r[ri].start ||
                            c + 16 > r[ri].end)
                            continue;
                        CUuuid u;
                        memcpy(&u, (const void *)c, 16);
                        char how[32];
                        snprintf(how, sizeof how, "stride%d", strides[si]);
                        try_candidate(&u, how);
                    }
            }
        }
        struct sbuf line = {0};
        sb_printf(&line, "uuid_at ");
        put_uuid(&line, &found[k]);
        sb_printf(&line, " %d%s", hits, where.p ? where.p : "");
        puts(line.p);
        free(line.p);
        free(where.p);
    }

    for (int k = 0; k < 2; k++)
        for (size_t ri = 0; ri < nr; ri++) {
            const uint8_t *p = (const uint8_t *)r[ri].start;
            size_t len = r[ri].end - r[ri].start;
            const uint8_t *h;
            while (len >= 16 &&
                   (h = memmem(p, len, module_iterator_prefix[k], 4))) {
                if ((uintptr_t)h + 16 <= r[ri].end) {
                    CUuuid u;
                    memcpy(&u, h, 16);
                    try_candidate(&u, k ? "prefixBE3F166E" : "prefix6E163FBE");
                }
                len -= (size_t)(h + 1 - p);
                p = h + 1;
            }
        }
    for (size_t i = 0; i < ndiscovered; i++)
        probe_table("init", discovered[i].how, &discovered[i].uuid);
}

static int null_table_child(void *arg)
{
    CUuuid u;
    parse_uuid(CUDART_INTERFACE_UUID, &u);
    const void *t = NULL;
    int rc = arg ? drv.export_table(NULL, &u) : drv.export_table(&t, NULL);
    printf("rc=%d\n", rc);
    return rc;
}

static int export_tables_mode(void)
{
    load_driver();
    int driver_version = -1;
    drv.driver_version(&driver_version);
    printf("# gvs cuGetExportTable probe; format: "
           "plugins/cuda/probe/README.md\n");
    printf("probe export-tables %d\n", PROBE_VERSION);
    printf("library %s\n", drv.path);
    printf("driver_version %d\n", driver_version);

    CUuuid found[NKNOWN * 2];
    size_t nfound = 0;
    for (int phase = 0; phase < 2; phase++) {
        const char *ph = phase ? "init" : "noinit";
        if (phase == 1) {
            printf("cuInit %d\n", drv.init(0));
        } else {
            char *a = isolated(null_table_child, (void *)1, 5);
            char *b = isolated(null_table_child, NULL, 5);
            printf("edge noinit null_table_pointer : %s", a);
            printf("edge noinit null_uuid : %s", b);
            free(a);
            free(b);
        }
        for (size_t i = 0; i < NKNOWN; i++) {
            CUuuid u;
            parse_uuid(known_tables[i].text, &u);
            const void *t = probe_table(ph, known_tables[i].name, &u);
            if (!t && i < NKNOWN - 2) {
                CUuuid s = guid_swapped(&u);
                struct sbuf label = {0};
                sb_printf(&label, "%s:guid-swapped", known_tables[i].name);
                t = probe_table(ph, label.p, &s);
                free(label.p);
                if (t)
                    u = s;
            }
            if (t && phase == 1)
                found[nfound++] = u;
        }
    }
    discover_tables(found, nfound);
    print_rc_legend();
    return 0;
}

/* ------------------------------------------------------------------ */
/* The integrity check                                                  */

/* HMAC key and the version%10 == 0 / 1 constants, from the facts file. */
static const uint8_t integrity_key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9,
                                          0xa7, 0x52, 0xaa, 0x08, 0x41, 0x36,
                                          0x0b, 0xf5, 0x5a, 0x9f};
static const unsigned long long integrity_constant[2][2] = {
    {0x3341181c03cb675cull, 0x8ed383aa1f4cd1e8ull},
    {0x1841181c03cb675cull, 0x8ed383aa1f4cd1e8ull},
};

#define MAX_DEVICES 64

struct integrity_inputs {
    unsigned version;
    unsigned long long seconds;
    int driver_version;
    uint32_t pid, tid_pthread, tid_kernel;
    uint64_t cudart_table, integrity_table, fn;
    int ndev;
    struct {
        uint8_t uuid_v2[16], uuid_v1[16];
        int32_t domain, bus, device;
    } dev[MAX_DEVICES];
};

/* Which of the uncertain inputs a digest uses; all 0 is the facts' record
 * (cuDriverGetVersion, low 32 bits of pthread_self, every device, UUIDs
 * from cuDeviceGetUuid_v2). */
struct integrity_variant {
    int drv;     /* 0 cuDriverGetVersion, 1 CUDA_VERSION of cuda.h,
                    2 the version argument */
    int tid;     /* 0 pthread_self, 1 gettid */
    int devices; /* 0 all, 1 none */
    int uuid;    /* 0 cuDeviceGetUuid_v2, 1 cuDeviceGetUuid */
};

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Builds the message the facts describe; returns its length. */
static size_t integrity_message(const struct integrity_inputs *in,
                                const struct integrity_variant *var,
                                uint8_t *msg)
{
    uint32_t dv = var->drv == 0   ? (uint32_t)in->driver_version
                  : var->drv == 1 ? (uint32_t)CUDA_VERSION
                                  : in->version;
    put_u32(msg + 0, dv);
    put_u32(msg + 4, in->version);
    put_u32(msg + 8, in->pid);
    put_u32(msg + 12, var->tid ? in->tid_kernel : in->tid_pthread);
    put_u64(msg + 16, in->cudart_table);
    put_u64(msg + 24, in->integrity_table);
    put_u64(msg + 32, in->fn);
    put_u64(msg + 40, in->seconds);
    size_t n = 48;
    for (int d = 0; !var->devices && d < in->ndev; d++) {
        memcpy(msg + n, var->uuid ? in->dev[d].uuid_v1 : in->dev[d].uuid_v2,
               16);
        memcpy(msg + n + 16, &in->dev[d].domain, 4);
        memcpy(msg + n + 20, &in->dev[d].bus, 4);
        memcpy(msg + n + 24, &in->dev[d].device, 4);
        n += 28;
    }
    return n;
}

static void integrity_digest(const struct integrity_inputs *in,
                             const struct integrity_variant *var,
                             unsigned long long out[2])
{
    static uint8_t msg[48 + 28 * MAX_DEVICES];
    uint8_t d[GVS_MD2_DIGEST_SIZE];
    size_t n = integrity_message(in, var, msg);
    gvs_hmac_md2(integrity_key, sizeof integrity_key, msg, n, d);
    memcpy(out, d, sizeof d);
}

static const void *get_table(const char *uuid_text)
{
    CUuuid u;
    const void *t = NULL;
    parse_uuid(uuid_text, &u);
    return drv.export_table(&t, &u) == CUDA_SUCCESS ? t : NULL;
}

static void put_hex(const char *phase, const char *key, const uint8_t *p,
                    size_t n)
{
    printf("%s %s ", phase, key);
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

struct integrity_run {
    const char *phase;
    unsigned version;
    unsigned long long seconds;
};

/* Calls the driver's integrity_check, gathers every input of the digest
 * and prints both with the verdict.  In the noinit phase the call comes
 * before cuInit, which the device queries then need. */
static int integrity_phase(void *arg)
{
    const struct integrity_run *run = arg;
    const char *ph = run->phase;
    struct integrity_inputs in = {.version = run->version,
                                  .seconds = run->seconds};

    const void *cudart = get_table(CUDART_INTERFACE_UUID);
    const void *integ = get_table(INTEGRITY_CHECK_UUID);
    if (!integ) {
        printf("%s error no INTEGRITY_CHECK table\n", ph);
        return 0;
    }
    fn_integrity check;
    memcpy(&check, (const char *)integ + 8, sizeof check);

    unsigned long long out[2] = {0x5e5e5e5e5e5e5e5eull, 0x5e5e5e5e5e5e5e5eull};
    int rc = check(run->version, run->seconds, out);
    note_rc(rc);
    in.pid = (uint32_t)getpid();
    in.tid_pthread = (uint32_t)(uintptr_t)pthread_self();
    in.tid_kernel = (uint32_t)syscall(SYS_gettid);
    in.cudart_table = (uint64_t)(uintptr_t)cudart;
    in.integrity_table = (uint64_t)(uintptr_t)integ;
    void *fnp;
    memcpy(&fnp, &check, sizeof fnp);
    in.fn = (uint64_t)(uintptr_t)fnp;
    printf("%s call rc=%d out 0x%016llx 0x%016llx\n", ph, rc, out[0], out[1]);

    if (strcmp(ph, "noinit") == 0)
        printf("%s cuInit_after_call %d\n", ph, drv.init(0));
    int dv_rc = drv.driver_version(&in.driver_version);
    int count = 0;
    int count_rc = drv.device_count(&count);
    for (int i = 0; i < count && in.ndev < MAX_DEVICES; i++) {
        CUdevice dev;
        CUuuid u1 = {{0}}, u2 = {{0}};
        int a[3] = {-1, -1, -1};
        static const CUdevice_attribute attr[3] = {
            CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
            CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID};
        if (drv.device_get(&dev, i) != CUDA_SUCCESS)
            break;
        if (drv.device_uuid_v1)
            drv.device_uuid_v1(&u1, dev);
        if (drv.device_uuid_v2)
            drv.device_uuid_v2(&u2, dev);
        for (int k = 0; k < 3; k++)
            drv.device_attr(&a[k], attr[k], dev);
        memcpy(in.dev[in.ndev].uuid_v1, u1.bytes, 16);
        memcpy(in.dev[in.ndev].uuid_v2, u2.bytes, 16);
        in.dev[in.ndev].domain = a[0];
        in.dev[in.ndev].bus = a[1];
        in.dev[in.ndev].device = a[2];
        in.ndev++;
    }

    printf("%s input driver_version %d rc %d\n", ph, in.driver_version,
           dv_rc);
    printf("%s input cuda_h_version %d\n", ph, CUDA_VERSION);
    printf("%s input version %u\n", ph, in.version);
    printf("%s input pid %u\n", ph, in.pid);
    printf("%s input tid_pthread_low32 0x%08x\n", ph, in.tid_pthread);
    printf("%s input tid_gettid %u\n", ph, in.tid_kernel);
    printf("%s input cudart_interface_table 0x%016jx\n", ph,
           (uintmax_t)in.cudart_table);
    printf("%s input integrity_check_table 0x%016jx\n", ph,
           (uintmax_t)in.integrity_table);
    printf("%s input integrity_check_fn 0x%016jx\n", ph, (uintmax_t)in.fn);
    printf("%s input unix_seconds %llu\n", ph, in.seconds);
    printf("%s input devices %d rc %d\n", ph, in.ndev, count_rc);
    for (int d = 0; d < in.ndev; d++) {
        printf("%s device %d pci %d %d %d\n", ph, d, in.dev[d].domain,
               in.dev[d].bus, in.dev[d].device);
        put_hex(ph, "device_uuid_v2", in.dev[d].uuid_v2, 16);
        put_hex(ph, "device_uuid_v1", in.dev[d].uuid_v1, 16);
    }

    static uint8_t msg[48 + 28 * MAX_DEVICES];
    const struct integrity_variant facts = {0, 0, 0, 0};
    put_hex(ph, "message", msg, integrity_message(&in, &facts, msg));
    unsigned long long want[2];
    integrity_digest(&in, &facts, want);
    printf("%s computed 0x%016llx 0x%016llx\n", ph, want[0], want[1]);

    int hmac_ok = out[0] == want[0] && out[1] == want[1];
    if (run->version % 10 <= 1) {
        const unsigned long long *c = integrity_constant[run->version % 10];
        printf("%s integrity: constant %s driver (constant 0x%016llx "
               "0x%016llx)\n",
               ph, out[0] == c[0] && out[1] == c[1] ? "==" : "!=", c[0],
               c[1]);
    }
    printf("%s integrity: computed %s driver\n", ph, hmac_ok ? "==" : "!=");

    static const char *const drv_word[] = {"cuDriverGetVersion",
                                           "CUDA_VERSION", "version_arg"};
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < 2; t++)
            for (int d = 0; d < 2; d++)
                for (int u = 0; u < 2; u++) {
                    struct integrity_variant v = {a, t, d, u};
                    unsigned long long got[2];
                    integrity_digest(&in, &v, got);
                    if (got[0] == out[0] && got[1] == out[1])
                        printf("%s variant_matches %s %s %s %s\n", ph,
                               drv_word[a], t ? "gettid" : "pthread_self",
                               d ? "no_devices" : "devices",
                               u ? "uuid_v1" : "uuid_v2");
                }
    return rc;
}

static int integrity_mode(const char *version_text, const char *seconds_text)
{
    char *end;
    errno = 0;
    unsigned long version = strtoul(version_text, &end, 0);
    if (errno || *end || version > UINT_MAX)
        die(2, "bad VERSION %s", version_text);
    unsigned long long seconds = strtoull(seconds_text, &end, 0);
    if (errno || *end)
        die(2, "bad UNIX_SECONDS %s", seconds_text);

    load_driver();
    if (!drv.device_count || !drv.device_get || !drv.device_attr)
        die(1, "libcuda.so.1 lacks the device queries");
    printf("# gvs INTEGRITY_CHECK probe; format: "
           "plugins/cuda/probe/README.md\n");
    printf("probe integrity %d\n", PROBE_VERSION);
    printf("library %s\n", drv.path);

    struct integrity_run run = {"noinit", (unsigned)version, seconds};
    /* Long enough for the child's cuInit on a machine of 8 GPUs without
     * persistence mode. */
    char *noinit = isolated(integrity_phase, &run, 120);
    fputs(noinit, stdout);
    free(noinit);
    printf("cuInit %d\n", drv.init(0));
    run.phase = "init";
    integrity_phase(&run);
    print_rc_legend();
    return 0;
}

/* ------------------------------------------------------------------ */
/* Self-test (no driver needed)                                         */

static int selftest_check(const char *what, const uint8_t *got,
                          const char *want_hex)
{
    char hex[2 * GVS_MD2_DIGEST_SIZE + 1];
    for (int i = 0; i < GVS_MD2_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", got[i]);
    int ok = strcmp(hex, want_hex) == 0;
    printf("selftest %s %s%s\n", what, ok ? "ok" : "FAILED: got ",
           ok ? "" : hex);
    return ok;
}

static int selftest_mode(void)
{
    /* RFC 1319 appendix A.5. */
    static const struct {
        const char *msg, *digest;
    } rfc[] = {
        {"", "8350e5a3e24c153df2275c9f80692773"},
        {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
        {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
        {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
        {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "da33def2a42df13975352846c30338cd"},
        {"1234567890123456789012345678901234567890123456789012345678901234567"
         "8901234567890",
         "d5976f79d83d3a0dc9806c3c66f3efd8"},
    };
    int passed = 0, failed = 0;
    uint8_t d[GVS_MD2_DIGEST_SIZE];
    char what[128];

    for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
        gvs_md2(rfc[i].msg, strlen(rfc[i].msg), d);
        snprintf(what, sizeof what, "md2(\"%.20s%s\")", rfc[i].msg,
                 strlen(rfc[i].msg) > 20 ? "..." : "");
        selftest_check(what, d, rfc[i].digest) ? passed++ : failed++;
    }

    /* 768 bytes (0..255 three times) fed in uneven pieces: the block
     * buffering must not change the digest.  Reference value from an
     * independent MD2 (pycryptodome). */
    static uint8_t big[768];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)i;
    gvs_md2(big, sizeof big, d);
    selftest_check("md2(0..255 x3)", d, "16f22b92f085399d669f7dd794a9dd6b")
        ? passed++
        : failed++;
    struct gvs_md2_ctx ctx;
    gvs_md2_init(&ctx);
    for (size_t off = 0, step = 1; off < sizeof big; step = step % 37 + 1) {
        size_t n = step < sizeof big - off ? step : sizeof big - off;
        gvs_md2_update(&ctx, big + off, n);
        off += n;
    }
    gvs_md2_final(&ctx, d);
    selftest_check("md2(0..255 x3, in pieces)", d,
                   "16f22b92f085399d669f7dd794a9dd6b")
        ? passed++
        : failed++;

    /* HMAC-MD2 reference values from pycryptodome's HMAC over its MD2. */
    static uint8_t rec[76];
    for (size_t i = 0; i < sizeof rec; i++)
        rec[i] = (uint8_t)i;
    static uint8_t aa[20], dd[50];
    memset(aa, 0xaa, sizeof aa);
    memset(dd, 0xdd, sizeof dd);
    gvs_hmac_md2(integrity_key, sizeof integrity_key, NULL, 0, d);
    selftest_check("hmac_md2(integrity key, \"\")", d,
                   "f66b07aba4a875ea140c2cc013a41c6a")
        ? passed++
        : failed++;
    gvs_hmac_md2(integrity_key, sizeof integrity_key, rec, sizeof rec, d);
    selftest_check("hmac_md2(integrity key, 0..75)", d,
                   "70179cf997c1374ec2d4e2c0c4fd2e23")
        ? passed++
        : failed++;
    gvs_hmac_md2("Jefe", 4, "what do ya want for nothing?", 28, d);
    selftest_check("hmac_md2(\"Jefe\", ...)", d,
                   "292f9d34f9e311846de86c495d7adfa2")
        ? passed++
        : failed++;
    gvs_hmac_md2(aa, sizeof aa, dd, sizeof dd, d);
    selftest_check("hmac_md2(20 x aa, 50 x dd)", d,
                   "590cad9645dfdd80a10db004f1b0ae0a")
        ? passed++
        : failed++;

    /* The name rules the generator relies on. */
    static const char *const bases[][2] = {
        {"cuMemcpy3DBatchAsync_v2_ptsz", "cuMemcpy3DBatchAsync"},
        {"cuMemcpy_ptds", "cuMemcpy"},
        {"cuCtxCreate_v4", "cuCtxCreate"},
        {"cuMemAlloc", "cuMemAlloc"},
        {"cuGetProcAddress_v2", "cuGetProcAddress"},
        {"cuMemcpy3D_v2_ptds", "cuMemcpy3D"},
    };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        char *b = base_name(bases[i][0]);
        int ok = strcmp(b, bases[i][1]) == 0;
        printf("selftest base_name(%s) %s%s\n", bases[i][0],
               ok ? "ok" : "FAILED: got ", ok ? "" : b);
        ok ? passed++ : failed++;
        free(b);
    }

    printf("selftest: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------ */

static int list_bases_mode(const char *exports_path)
{
    struct strvec exports = {0}, bases = {0};
    read_names(exports_path, &exports);
    for (size_t i = 0; i < exports.n; i++)
        sv_push(&bases, base_name(exports.v[i]));
    sv_sort_unique(&bases);
    for (size_t i = 0; i < bases.n; i++)
        puts(bases.v[i]);
    return 0;
}

static _Noreturn void usage(void)
{
    fputs("usage: procaddr_probe [-o FILE] [--dense] EXPORTS [EXTRA_NAMES]\n"
          "       procaddr_probe [-o FILE] --export-tables\n"
          "       procaddr_probe [-o FILE] --integrity VERSION UNIX_SECONDS\n"
          "       procaddr_probe --list-bases EXPORTS\n"
          "       procaddr_probe --selftest\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    int dense = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out_path = argv[++i];
        else if (strcmp(argv[i], "--dense") == 0)
            dense = 1;
        else
            break;
    }
    if (out_path && !freopen(out_path, "w", stdout))
        die(2, "cannot write %s: %s", out_path, strerror(errno));
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    int rest = argc - i;
    const char *mode = rest > 0 ? argv[i] : "";
    int rc;
    if (strcmp(mode, "--selftest") == 0 && rest == 1)
        rc = selftest_mode();
    else if (strcmp(mode, "--list-bases") == 0 && rest == 2)
        rc = list_bases_mode(argv[i + 1]);
    else if (strcmp(mode, "--export-tables") == 0 && rest == 1)
        rc = export_tables_mode();
    else if (strcmp(mode, "--integrity") == 0 && rest == 3)
        rc = integrity_mode(argv[i + 1], argv[i + 2]);
    else if (mode[0] != '-' && (rest == 1 || rest == 2))
        rc = procaddr_mode(argv[i], rest == 2 ? argv[i + 1] : NULL, dense);
    else
        usage();
    if (fflush(stdout) != 0 || ferror(stdout))
        die(1, "cannot write the output: %s", strerror(errno));
    return rc;
}
