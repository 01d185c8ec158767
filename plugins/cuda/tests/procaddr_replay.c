/*
 * cuda.procaddr: every answer NVIDIA's driver gave the probe
 * (plugins/cuda/probe/README.md, procaddr.txt) replayed against the
 * build's cuGetProcAddress and cuGetProcAddress_v2, read here
 * independently of the generator that made the frontend's table:
 *
 * - each range of each proc record at its low end, middle and high end:
 *   the same CUresult, the same symbolStatus, and *pfn the library's own
 *   export of the name the driver gave (its dlsym), NULL, or unwritten;
 * - each edge record (odd flags, NULL arguments), where the driver's
 *   crashes are CUDA_ERROR_INVALID_VALUE with nothing written, gvs's
 *   deliberate difference;
 * - each export the probe did not ask about, answering as the probe's
 *   made-up name UNKNOWN does.
 *
 * usage: procaddr_replay LIBCUDA PROCADDR_TXT EXPORTS
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define UNKNOWN "cuNotARealFunction"
#define MAX_REPORTED 100 /* mismatches printed; all are counted */
#define UNSET_STATUS ((CUdriverProcAddressQueryResult)0x5a5a)

typedef CUresult (*gpa_v1_fn)(const char *symbol, void **pfn, int cudaVersion,
                              cuuint64_t flags);
typedef CUresult (*gpa_v2_fn)(const char *symbol, void **pfn, int cudaVersion,
                              cuuint64_t flags, CUdriverProcAddressQueryResult *status);

static void *lib;
static gpa_v1_fn gpa_v1;
static gpa_v2_fn gpa_v2;
static char unset_mark;        /* *pfn's value before a call */
static long checks, failures;

/* An answer: STATUS -1 = none ('-'), -2 = unwritten ('u'); PFN the
 * driver's word: a name, "NULL" or "unset". */
struct outcome {
    int rc;
    int status;
    char pfn[128];
};

/* One call, and how to make it: API 1 or 2, pfn and status passed or NULL. */
struct call {
    int api;
    const char *symbol;
    int version;
    cuuint64_t flags;
    int pass_pfn, pass_status;
    const char *what; /* the record, for a mismatch */
};

/* Says why the replay cannot go on; returns 1. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 1;
}

/* "v1" or "v2": 1 or 2; 0 for anything else. */
static int api_number(const char *api)
{
    return strcmp(api, "v1") == 0 ? 1 : strcmp(api, "v2") == 0 ? 2 : 0;
}

/* A NAME token: bare, or a JSON string with \-escapes of ASCII. */
static int decode_name(const char *t, char *out, size_t size)
{
    if (t[0] != '"')
        return snprintf(out, size, "%s", t) < (int)size ? 0 : -1;
    size_t n = 0;
    for (const char *p = t + 1; *p != '"'; p++) {
        char c = *p;
        if (c == '\0' || n + 1 >= size)
            return -1;
        if (c == '\\') {
            c = *++p;
            if (c == 'u') {
                char hex[5] = {0};
                for (int i = 0; i < 4; i++)
                    if ((hex[i] = *++p) == '\0')
                        return -1;
                long v = strtol(hex, NULL, 16);
                if (v <= 0 || v > 0x7f)
                    return -1;
                c = (char)v;
            } else {
                const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
                const char *k = c != '\0' ? strchr(from, c) : NULL;
                if (k == NULL)
                    return -1;
                c = to[k - from];
            }
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

/* RC,STATUS,PFN */
static int parse_outcome(const char *s, struct outcome *o)
{
    char status[8];
    if (sscanf(s, "%d,%7[^,],%127s", &o->rc, status, o->pfn) != 3)
        return -1;
    o->status = strcmp(status, "-") == 0 ? -1 : strcmp(status, "u") == 0 ? -2 : atoi(status);
    char *alias = strchr(o->pfn, '|'); /* names sharing the address: the first */
    if (alias != NULL)
        *alias = '\0';
    return 0;
}

static void describe_pfn(void *p, char *buf, size_t size)
{
    Dl_info info;
    if (p == &unset_mark)
        snprintf(buf, size, "unset");
    else if (p == NULL)
        snprintf(buf, size, "NULL");
    else if (dladdr(p, &info) != 0 && info.dli_sname != NULL && info.dli_saddr == p)
        snprintf(buf, size, "%s", info.dli_sname);
    else
        snprintf(buf, size, "%p", p);
}

static void replay(const struct call *c, const struct outcome *want)
{
    void *pfn = &unset_mark;
    CUdriverProcAddressQueryResult status = UNSET_STATUS;
    void **pp = c->pass_pfn ? &pfn : NULL;
    CUdriverProcAddressQueryResult *ps = c->pass_status ? &status : NULL;
    CUresult rc = c->api == 1 ? gpa_v1(c->symbol, pp, c->version, c->flags)
                              : gpa_v2(c->symbol, pp, c->version, c->flags, ps);
    checks++;

    /* A name the library does not export matches no pointer. */
    int named = strcmp(want->pfn, "NULL") != 0 && strcmp(want->pfn, "unset") != 0;
    void *want_pfn = named ? dlsym(lib, want->pfn)
                           : strcmp(want->pfn, "NULL") == 0 ? NULL : &unset_mark;
    int want_status = want->status >= 0 ? want->status : (int)UNSET_STATUS;
    if ((int)rc == want->rc && (int)status == want_status && pfn == want_pfn &&
        !(named && want_pfn == NULL))
        return;
    if (++failures > MAX_REPORTED)
        return;
    char got_pfn[128], got_status[16] = "unwritten", want_st[16] = "unwritten";
    describe_pfn(pfn, got_pfn, sizeof(got_pfn));
    if (status != UNSET_STATUS)
        snprintf(got_status, sizeof(got_status), "%d", (int)status);
    if (want->status >= 0)
        snprintf(want_st, sizeof(want_st), "%d", want->status);
    printf("FAIL: %s: v%d(\"%s\", version %d, flags %llu): rc %d status %s pfn %s; "
           "the driver: rc %d status %s pfn %s%s\n",
           c->what, c->api, c->symbol != NULL ? c->symbol : "(null)", c->version,
           (unsigned long long)c->flags, (int)rc, got_status, got_pfn, want->rc, want_st,
           want->pfn, named && want_pfn == NULL ? " (not exported)" : "");
}

static long long bound(const char *s, long long inf)
{
    return strcmp(s, "*") == 0 ? inf : strtoll(s, NULL, 10);
}

/* The ranges of a proc record (WHAT, its head), "LO..HI=OUTCOME ..." for
 * one name, flags and API: each at its low end, middle and high end. */
static int replay_ranges(const char *name, int flags, int api, const char *ranges,
                         const char *what)
{
    char desc[640];
    char *copy = strdup(ranges), *save = NULL;
    int bad = copy == NULL;
    for (char *r = strtok_r(copy, " ", &save); r != NULL && !bad;
         r = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(r, '='), *dots = strstr(r, "..");
        struct outcome want;
        if (eq == NULL || dots == NULL || dots > eq || parse_outcome(eq + 1, &want) != 0) {
            bad = fail("%s: cannot read range %s", what, r);
            break;
        }
        *eq = '\0';
        snprintf(desc, sizeof(desc), "%s, %s", what, r);
        *dots = '\0';
        long long lo = bound(r, INT_MIN), hi = bound(dots + 2, INT_MAX);
        long long points[3] = {lo, lo + (hi - lo) / 2, hi};
        for (int i = 0; i < 3; i++) {
            if (i > 0 && points[i] == points[i - 1])
                continue;
            struct call c = {api, name, (int)points[i], (cuuint64_t)flags, 1, api == 2, desc};
            replay(&c, &want);
        }
    }
    free(copy);
    return bad;
}

/* edge PHASE API LABEL NAME VERSION FLAGS : OUTCOME */
static int replay_edge(char *line)
{
    char phase[16], api[4], label[32], name_tok[256], outcome[64], name[256];
    int version;
    unsigned long long flags;
    int null_symbol = 0;
    if (sscanf(line, "edge %15s %3s %31s %255s %d %llu : %63s", phase, api, label,
               name_tok, &version, &flags, outcome) != 7 || api_number(api) == 0 ||
        (!(null_symbol = strcmp(name_tok, "(null)") == 0) &&
         decode_name(name_tok, name, sizeof(name)) != 0))
        return fail("cannot read %s", line);
    struct call c = {api_number(api), null_symbol ? NULL : name, version, flags,
                     strcmp(label, "null_pfn") != 0,
                     api_number(api) == 2 && strcmp(label, "null_status") != 0, line};
    struct outcome want;
    if (strncmp(outcome, "crash:", 6) == 0) {
        /* gvs's deliberate difference: refused, nothing written. */
        want = (struct outcome){CUDA_ERROR_INVALID_VALUE, c.pass_status ? -2 : -1, "unset"};
    } else if (parse_outcome(outcome, &want) != 0) {
        return fail("%s: the driver gave no answer to replay", line);
    }
    replay(&c, &want);
    return 0;
}

/* proc NAME FLAGS API PHASE : RANGES, cut in two at " : ". */
static int parse_proc(char *line, char *name, size_t size, int *flags, int *api,
                      char **ranges)
{
    char name_tok[512], api_tok[4];
    char *sep = strstr(line, " : ");
    if (sep == NULL)
        return -1;
    *sep = '\0';
    *ranges = sep + 3;
    if (sscanf(line, "proc %511s %d %3s %*s", name_tok, flags, api_tok) != 3 ||
        (*api = api_number(api_tok)) == 0)
        return -1;
    return decode_name(name_tok, name, size);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
    char **v;
    size_t n, cap;
};

static int add_name(struct names *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        char **v = realloc(s->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    if ((s->v[s->n] = strdup(name)) == NULL)
        return -1;
    s->n++;
    return 0;
}

static void free_names(struct names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIBCUDA PROCADDR_TXT EXPORTS\n", argv[0]);
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return fail("%s", dlerror());
    gpa_v1 = (gpa_v1_fn)dlsym(lib, "cuGetProcAddress");
    gpa_v2 = (gpa_v2_fn)dlsym(lib, "cuGetProcAddress_v2");
    if (gpa_v1 == NULL || gpa_v2 == NULL)
        return fail("%s exports no cuGetProcAddress or cuGetProcAddress_v2", argv[1]);
    FILE *data = fopen(argv[2], "r");
    FILE *exports = data != NULL ? fopen(argv[3], "r") : NULL;
    if (exports == NULL)
        return fail("cannot open %s or %s", argv[2], argv[3]);

    struct names probed = {0}, unknown = {0}; /* unknown: UNKNOWN's series lines */
    long proc = 0, edges = 0, unprobed = 0;
    int bad = 0;
    char *line = NULL;
    size_t cap = 0;
    while (!bad && getline(&line, &cap, data) > 0) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "edge ", 5) == 0) {
            bad = replay_edge(line);
            edges++;
            continue;
        }
        if (strncmp(line, "proc ", 5) != 0)
            continue;
        /* Kept whole, to be replayed for the exports the probe skipped. */
        if (strncmp(line + 5, UNKNOWN " ", strlen(UNKNOWN " ")) == 0 &&
            add_name(&unknown, line) != 0) {
            bad = fail("out of memory");
            break;
        }
        char name[256], *ranges;
        int flags, api;
        if (parse_proc(line, name, sizeof(name), &flags, &api, &ranges) != 0) {
            bad = fail("cannot read %s", line);
            break;
        }
        bad = replay_ranges(name, flags, api, ranges, line) || add_name(&probed, name) != 0;
        proc++;
    }
    fclose(data);
    if (!bad && (proc == 0 || unknown.n == 0))
        bad = fail("%s has no proc records, or none of %s", argv[2], UNKNOWN);

    /* The exports the probe did not ask about answer as an unknown name. */
    qsort(probed.v, probed.n, sizeof(char *), cmp_str);
    while (!bad && getline(&line, &cap, exports) > 0) {
        char *name = line + strspn(line, " \t");
        name[strcspn(name, " \t\r\n")] = '\0';
        if (name[0] == '\0' || name[0] == '#' ||
            bsearch(&name, probed.v, probed.n, sizeof(char *), cmp_str) != NULL)
            continue;
        unprobed++;
        for (size_t i = 0; i < unknown.n && !bad; i++) {
            char model[256], what[512], *ranges, *record = strdup(unknown.v[i]);
            int flags, api;
            bad = record == NULL ||
                  parse_proc(record, model, sizeof(model), &flags, &api, &ranges) != 0;
            if (!bad) {
                snprintf(what, sizeof(what), "%s, not probed, as %s", name, record);
                bad = replay_ranges(name, flags, api, ranges, what);
            }
            free(record);
        }
    }
    fclose(exports);
    free(line);
    free_names(&probed);
    free_names(&unknown);
    dlclose(lib);
    if (bad)
        return 1;
    if (failures > 0) {
        if (failures > MAX_REPORTED)
            printf("... and %ld more\n", failures - MAX_REPORTED);
        printf("FAIL: %ld of %ld checks differ from the driver\n", failures, checks);
        return 1;
    }
    printf("ok: %ld records, %ld checks (%ld proc series, %ld edge cases; "
           "exports the probe skipped, answered as %s: %ld)\n",
           proc + edges, checks, proc, edges, UNKNOWN, unprobed);
    return 0;
}
