/*
 * api_trace.so: what a program asks of NVIDIA's NVML or CUDA driver, and
 * of their private export tables, for gvs's frontends to answer the same
 * (tools/probe/README.md).  Preloaded into a program that loads the
 * library itself: the NVML functions it looks up with dlsym are handed
 * back wrapped, each call logged with its six integer arguments, its
 * result, and the first bytes each pointer argument points at after the
 * call; the tables nvmlInternalGetExportTable and cuGetExportTable hand
 * out (the latter also when found through cuGetProcAddress) are copied
 * with each slot that points into the library's code wrapped the same
 * way.  Not part of gvs: it loads NVIDIA's libraries, which gvs's
 * frontends never do.  x86-64 System V only; a wrapped function with
 * more than six arguments would see its stack arguments moved.
 *
 * Environment:
 *   API_TRACE_LOG     the log (appended), else stderr
 *   API_TRACE_TABLES  the tables to wrap, as comma-separated first 8 hex
 *                     digits of their UUIDs (lower case); all when unset
 *   API_TRACE_FAIL    slots answered with API_TRACE_FAIL_RC (default 801,
 *                     CUDA_ERROR_NOT_SUPPORTED) without calling the
 *                     library: "uuid8:slot,...", to see what a program
 *                     does without them
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_WRAPS 1024
#define MAX_SLOTS 300
#define DUMP_BYTES 64

struct wrap {
    void *real;
    char name[96];
};

static struct wrap wraps[MAX_WRAPS];
static int nwraps;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

/* The trampolines: trampoline i puts i in %r11 and jumps to the common
 * part, which saves the argument registers, asks enter() for the real
 * function, calls it with them, and gives the result to leave(). */
void *api_trace_enter(uint64_t i, const uint64_t *args);
void api_trace_leave(uint64_t i, uint64_t ret, const uint64_t *args);
__asm__(".text\n"
        "api_trace_common:\n"
        "  push %rbp\n  mov %rsp, %rbp\n  push %rbx\n  push %r12\n"
        "  sub $64, %rsp\n"
        "  mov %rdi, 0(%rsp)\n  mov %rsi, 8(%rsp)\n  mov %rdx, 16(%rsp)\n"
        "  mov %rcx, 24(%rsp)\n  mov %r8, 32(%rsp)\n  mov %r9, 40(%rsp)\n"
        "  mov %r11, %rbx\n"
        "  mov %rbx, %rdi\n  mov %rsp, %rsi\n  call api_trace_enter\n"
        "  mov %rax, %r12\n"
        "  mov 0(%rsp), %rdi\n  mov 8(%rsp), %rsi\n  mov 16(%rsp), %rdx\n"
        "  mov 24(%rsp), %rcx\n  mov 32(%rsp), %r8\n  mov 40(%rsp), %r9\n"
        "  call *%r12\n"
        "  mov %rax, 48(%rsp)\n"
        "  mov %rbx, %rdi\n  mov %rax, %rsi\n  mov %rsp, %rdx\n"
        "  call api_trace_leave\n"
        "  mov 48(%rsp), %rax\n"
        "  add $64, %rsp\n  pop %r12\n  pop %rbx\n  pop %rbp\n  ret\n"
        "  .balign 16\n"
        ".globl api_trace_tramp0\n"
        "api_trace_tramp0:\n"
        "  .set i, 0\n"
        "  .rept 1024\n"
        "  mov $i, %r11\n  jmp api_trace_common\n  .balign 16\n"
        "  .set i, i + 1\n"
        "  .endr\n");
extern char api_trace_tramp0[];

static void *tramp(int i)
{
    return api_trace_tramp0 + 16 * i;
}

static FILE *log_file(void)
{
    if (out == NULL) {
        const char *p = getenv("API_TRACE_LOG");
        out = p != NULL ? fopen(p, "a") : NULL;
        if (out == NULL)
            out = stderr;
        setvbuf(out, NULL, _IOLBF, 0);
    }
    return out;
}

/* len bytes at p into buf, 0, or -1 where p is not readable. */
static int peek(const void *p, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)p, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len
               ? 0 : -1;
}

void *api_trace_enter(uint64_t i, const uint64_t *a)
{
    pthread_mutex_lock(&lock);
    fprintf(log_file(), "call %s(%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)\n",
            wraps[i].name, a[0], a[1], a[2], a[3], a[4], a[5]);
    pthread_mutex_unlock(&lock);
    return wraps[i].real;
}

void api_trace_leave(uint64_t i, uint64_t ret, const uint64_t *a)
{
    pthread_mutex_lock(&lock);
    FILE *f = log_file();
    fprintf(f, "  ret %s = %#lx\n", wraps[i].name, ret);
    /* The arguments, then the result, that point at readable memory. */
    for (int k = 0; k < 7; k++) {
        uint64_t v = k < 6 ? a[k] : ret;
        uint8_t b[DUMP_BYTES];
        if (v < 0x10000 || peek((void *)v, b, sizeof(b)) != 0)
            continue;
        if (k < 6)
            fprintf(f, "  arg%d %#lx:", k, v);
        else
            fprintf(f, "  ret %#lx:", v);
        for (size_t j = 0; j < sizeof(b); j++)
            fprintf(f, "%s%02x", j % 8 ? "" : " ", b[j]);
        fprintf(f, "\n");
    }
    pthread_mutex_unlock(&lock);
}

/* A trampoline for real under name, or real itself when none is left. */
static void *wrap(void *real, const char *name)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nwraps; i++)
        if (wraps[i].real == real) {
            pthread_mutex_unlock(&lock);
            return tramp(i);
        }
    void *t = real;
    if (nwraps < MAX_WRAPS) {
        wraps[nwraps].real = real;
        snprintf(wraps[nwraps].name, sizeof(wraps[nwraps].name), "%s", name);
        t = tramp(nwraps++);
    }
    pthread_mutex_unlock(&lock);
    return t;
}

static void *(*real_dlsym)(void *, const char *);
static int (*real_nvml_table)(const void **, const void *);
static int (*real_cu_table)(const void **, const void *);
/* cuGetProcAddress, by its two names: each found pointer gets its own
 * wrapper (v1 takes four arguments of v2's five; the fifth passed to v1
 * is ignored). */
static int (*real_proc[2])(const char *, void **, int, uint64_t, void *);

/* Whether list (comma-separated, NULL = everything when all) names key. */
static int listed(const char *list, const char *key, int all)
{
    if (list == NULL)
        return all;
    size_t n = strlen(key);
    for (const char *p = list; (p = strstr(p, key)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* A slot named in API_TRACE_FAIL: fails without calling the library. */
static uint64_t fail_slot(void)
{
    const char *rc = getenv("API_TRACE_FAIL_RC");
    return rc != NULL ? strtoull(rc, NULL, 0) : 801;
}

/* The table copied, each slot that points into the library's code
 * wrapped; slot 0 kept as it is when it reads as the table's size. */
static int get_table(int (*real)(const void **, const void *), const void **table,
                     const void *id)
{
    int r = real(table, id);
    uint8_t u[16];
    memcpy(u, id, sizeof(u));
    char tag[40];
    snprintf(tag, sizeof(tag), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
             u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    pthread_mutex_lock(&lock);
    fprintf(log_file(), "table %s: ret %d ptr %p\n", tag, r, r == 0 ? *table : NULL);
    pthread_mutex_unlock(&lock);
    uint64_t head[8];
    if (r == 0 && *table != NULL && peek(*table, head, sizeof(head)) == 0) {
        pthread_mutex_lock(&lock);
        fprintf(log_file(), "  head");
        for (int k = 0; k < 8; k++)
            fprintf(log_file(), " %#lx", head[k]);
        fprintf(log_file(), "\n");
        pthread_mutex_unlock(&lock);
    }
    char tag8[9];
    snprintf(tag8, sizeof(tag8), "%.8s", tag);
    if (r != 0 || *table == NULL || !listed(getenv("API_TRACE_TABLES"), tag8, 1))
        return r;
    uint64_t slots[MAX_SLOTS];
    int n = 0;
    Dl_info self, info;
    dladdr((void *)real, &self);
    while (n < MAX_SLOTS && peek((const uint64_t *)*table + n, &slots[n], 8) == 0) {
        int code = dladdr((void *)slots[n], &info) && info.dli_fbase == self.dli_fbase;
        if (!code && !(n == 0 && slots[0] % 8 == 0 && slots[0] < 8 * MAX_SLOTS) &&
            slots[n] != 0)
            break;
        n++;
    }
    uint64_t *copy = calloc((size_t)n + 1, 8);
    for (int k = 0; k < n; k++) {
        char name[96], key[24];
        snprintf(name, sizeof(name), "table_%s[%d]", tag8, k);
        snprintf(key, sizeof(key), "%s:%d", tag8, k);
        int code = dladdr((void *)slots[k], &info) && info.dli_fbase == self.dli_fbase;
        int fail = code && listed(getenv("API_TRACE_FAIL"), key, 0);
        copy[k] = fail ? (uint64_t)(uintptr_t)wrap((void *)fail_slot, "failed slot")
                  : code ? (uint64_t)(uintptr_t)wrap((void *)slots[k], name) : slots[k];
        pthread_mutex_lock(&lock);
        fprintf(log_file(), "  slot %d %#lx%s%s\n", k, slots[k], code ? " code" : "",
                fail ? " failed" : "");
        pthread_mutex_unlock(&lock);
    }
    *table = copy;
    return r;
}

static int nvml_table(const void **table, const void *id)
{
    return get_table(real_nvml_table, table, id);
}

static int cu_table(const void **table, const void *id)
{
    return get_table(real_cu_table, table, id);
}

static void *wrap_symbol(void *p, const char *name);

/* cuGetProcAddress: the driver's answer, cuGetExportTable replaced. */
static int proc(int i, const char *symbol, void **pfn, int version, uint64_t flags,
                void *status)
{
    int r = real_proc[i](symbol, pfn, version, flags, status);
    if (r == 0 && pfn != NULL && symbol != NULL)
        *pfn = wrap_symbol(*pfn, symbol);
    return r;
}

static int proc0(const char *symbol, void **pfn, int version, uint64_t flags, void *st)
{
    return proc(0, symbol, pfn, version, flags, st);
}

static int proc1(const char *symbol, void **pfn, int version, uint64_t flags, void *st)
{
    return proc(1, symbol, pfn, version, flags, st);
}

/* NVML's functions wrapped; of the driver's, only those that lead to
 * the export tables (every other call would flood the log). */
static void *wrap_symbol(void *p, const char *name)
{
    if (p == NULL || name == NULL)
        return p;
    if (strcmp(name, "nvmlInternalGetExportTable") == 0) {
        *(void **)&real_nvml_table = p;
        return (void *)nvml_table;
    }
    if (strcmp(name, "cuGetExportTable") == 0) {
        *(void **)&real_cu_table = p;
        return (void *)cu_table;
    }
    if (strncmp(name, "cuGetProcAddress", 16) == 0) {
        for (int i = 0; i < 2; i++)
            if (real_proc[i] == NULL || (void *)real_proc[i] == p) {
                *(void **)&real_proc[i] = p;
                return i == 0 ? (void *)proc0 : (void *)proc1;
            }
        return p;
    }
    if (strncmp(name, "nvml", 4) != 0)
        return p;
    return wrap(p, name);
}

__attribute__((visibility("default"))) void *dlsym(void *h, const char *name)
{
    if (real_dlsym == NULL)
        *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (real_dlsym == NULL)
        *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return wrap_symbol(real_dlsym(h, name), name);
}
