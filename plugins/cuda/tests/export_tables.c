/*
 * cuda.export_tables: the build's cuGetExportTable answers as NVIDIA's
 * driver answered the probe (plugins/cuda/probe/README.md,
 * export-tables.txt), read here independently of the generator that made
 * the frontend's tables:
 *
 * - for every UUID the driver knew, a table whose slot 0 is the driver's
 *   size word, or, for a table without one, whose slots up to the
 *   driver's next table are NULL where the driver's are; for a sized
 *   table, every slot NULL exactly where the driver's is;
 * - for every UUID the driver refused, and for a NULL table pointer or
 *   UUID, the driver's rc with the table pointer NULL;
 * - the slots that call the library's own exports answer what those
 *   exports answer (their stubs' CUDA_ERROR_NOT_SUPPORTED until the
 *   driver API is remoted).
 *
 * usage: export_tables LIBCUDA EXPORT_TABLES_TXT
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define MAX_TABLES 512
#define MAX_LINE 8192

typedef CUresult (*export_table_fn)(const void **, const CUuuid *);
/* The slots that call exports, and those exports. */
typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*primary_fn)(CUcontext *, CUdevice);
typedef CUresult (*current_fn)(CUcontext *);
typedef CUresult (*get_fn)(void **, CUcontext, void *);
typedef CUresult (*count_fn)(int *);
typedef CUresult (*integrity_fn)(unsigned, unsigned long long, unsigned long long *);
typedef CUresult (*attribute_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*attribute_slot_fn)(CUdevice, unsigned, int, size_t *);

#define CUDART_INTERFACE "6BD5FB6C-5BF4-E74A-8987-D93912FD9DF9"

struct record {
    char uuid[40], label[64];
    int rc;
    long offset;   /* in the driver, -1 where it answered none */
    long size;     /* the size word, -1 where there is none */
    char map[2048]; /* slots 1.. of a sized table, else slots 0..31 */
};

static struct record rec[MAX_TABLES];
static int nrec, edge_rc[2] = {-1, -1}; /* null_table_pointer, null_uuid */
static export_table_fn get_table;
static void *lib;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

static int parse_uuid(const char *text, CUuuid *u)
{
    int n = 0;
    for (const char *p = text; *p != '\0' && n < 16; p++) {
        unsigned b;
        if (*p == '-')
            continue;
        if (sscanf(p, "%2x", &b) != 1)
            return -1;
        u->bytes[n++] = (char)b;
        p++;
    }
    return n == 16 ? 0 : -1;
}

/* The value of KEY= among the words of rest, or NULL. */
static const char *field(const char *rest, const char *key, char *out, size_t size)
{
    size_t k = strlen(key);
    for (const char *p = rest; (p = strstr(p, key)) != NULL; p += k)
        if ((p == rest || p[-1] == ' ') && p[k] == '=') {
            size_t n = strcspn(p + k + 1, " \n");
            if (n >= size)
                return NULL;
            memcpy(out, p + k + 1, n);
            out[n] = '\0';
            return out;
        }
    return NULL;
}

static int read_probe(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    static char line[MAX_LINE];
    while (fgets(line, sizeof line, f)) {
        char uuid[40], label[64], ptr[64], word[2048];
        int rc, pos = 0;
        if (sscanf(line, "edge noinit null_table_pointer : rc=%d", &rc) == 1)
            edge_rc[0] = rc;
        else if (sscanf(line, "edge noinit null_uuid : rc=%d", &rc) == 1)
            edge_rc[1] = rc;
        if (sscanf(line, "table init %39s %63s rc=%d ptr=%63s %n", uuid, label, &rc, ptr,
                   &pos) != 4 || nrec == MAX_TABLES)
            continue;
        struct record *r = &rec[nrec++];
        snprintf(r->uuid, sizeof r->uuid, "%s", uuid);
        snprintf(r->label, sizeof r->label, "%s", label);
        r->rc = rc;
        r->offset = strncmp(ptr, "libcuda+0x", 10) == 0 ? strtol(ptr + 10, NULL, 16) : -1;
        r->size = -1;
        r->map[0] = '\0';
        const char *rest = line + pos;
        if (rc != 0)
            continue;
        if (field(rest, "size", word, sizeof word) && strcmp(word, "-") != 0) {
            r->size = strtol(word, NULL, 10);
            field(rest, "slots", r->map, sizeof r->map);
        } else {
            field(rest, "first32", r->map, sizeof r->map);
        }
    }
    fclose(f);
    return 0;
}

/* The slots of a table without a size word: up to the driver's next. */
static long extent(const struct record *r)
{
    long next = -1;
    for (int i = 0; i < nrec; i++)
        if (rec[i].rc == 0 && rec[i].offset > r->offset &&
            (next < 0 || rec[i].offset < next))
            next = rec[i].offset;
    return next < 0 ? 0 : (next - r->offset) / 8;
}

static void check_table(const struct record *r)
{
    CUuuid u;
    const void *t = &u;
    if (parse_uuid(r->uuid, &u) != 0) {
        fail("%s %s: bad UUID", r->uuid, r->label);
        return;
    }
    CUresult rc = get_table(&t, &u);
    if ((int)rc != r->rc || (r->rc != 0) != (t == NULL)) {
        fail("%s %s: rc %d, the driver's %d", r->uuid, r->label, (int)rc, r->rc);
        return;
    }
    if (r->rc != 0)
        return;
    const uint64_t *slot = t;
    long first = r->size >= 0 ? 1 : 0;
    long n = r->size >= 0 ? r->size / 8 : extent(r);
    if (r->size >= 0 && (long)slot[0] != r->size)
        fail("%s %s: slot 0 is %lu, the driver's size %ld", r->uuid, r->label,
             (unsigned long)slot[0], r->size);
    if ((long)strlen(r->map) < n - first || n <= first) {
        fail("%s %s: the probe maps %zu slots of %ld", r->uuid, r->label,
             strlen(r->map), n);
        return;
    }
    for (long i = first; i < n; i++)
        if ((slot[i] == 0) != (r->map[i - first] == '0'))
            fail("%s %s: slot %ld is %sNULL, the driver's %s", r->uuid, r->label, i,
                 slot[i] == 0 ? "" : "not ", slot[i] == 0 ? "not" : "NULL");
}

static void check_null_arguments(void)
{
    CUuuid u;
    const void *t = &u;
    parse_uuid(CUDART_INTERFACE, &u);
    CUresult rc = get_table(NULL, &u);
    if ((int)rc != edge_rc[0])
        fail("NULL table pointer: rc %d, the driver's %d", (int)rc, edge_rc[0]);
    rc = get_table(&t, NULL);
    if ((int)rc != edge_rc[1] || t != NULL)
        fail("NULL UUID: rc %d, the driver's %d with the table NULL", (int)rc, edge_rc[1]);
}

/* Slot i of the table of uuid, as a data pointer to be cast. */
static void *slot_of(const char *uuid, int i)
{
    CUuuid u;
    const void *t = NULL;
    parse_uuid(uuid, &u);
    return get_table(&t, &u) == CUDA_SUCCESS ? ((void *const *)t)[i] : NULL;
}

static void same(const char *what, CUresult got, CUresult want)
{
    if (got != want)
        fail("%s: rc %d, the export it calls %d", what, (int)got, (int)want);
}

/* The slots that call the library's exports answer as those do. */
static void check_delegates(void)
{
    struct {
        uint32_t magic, version;
        const void *fatbin, *more;
    } wrapper = {0x466243b1, 1, "\x50\xed\x55\xba", NULL};
    CUmodule mod;
    CUcontext ctx;
    int n;
    void *v;
    unsigned long long digest[2];
    size_t pair[2];

    load_fn load = (load_fn)dlsym(lib, "cuModuleLoadFatBinary");
    load_fn load_slot = (load_fn)slot_of(CUDART_INTERFACE, 1);
    primary_fn retain = (primary_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    primary_fn primary_slot = (primary_fn)slot_of(CUDART_INTERFACE, 2);
    current_fn current = (current_fn)dlsym(lib, "cuCtxGetCurrent");
    get_fn get_slot = (get_fn)slot_of("C693336E-1121-DF11-A8C3-68F355D89593", 2);
    count_fn count = (count_fn)dlsym(lib, "cuDeviceGetCount");
    integrity_fn integrity_slot =
        (integrity_fn)slot_of("D4082055-BDE6-704B-8D34-BA123C66E1F2", 1);
    attribute_fn attribute = (attribute_fn)dlsym(lib, "cuDeviceGetAttribute");
    attribute_slot_fn attribute_slot =
        (attribute_slot_fn)slot_of("B10541E1-F7C7-C74A-9F64-F223BE99F1E2", 5);

    same("CUDART_INTERFACE[1] (cuModuleLoadFatBinary)", load_slot(&mod, &wrapper),
         load(&mod, wrapper.fatbin));
    same("CUDART_INTERFACE[2] (cuDevicePrimaryCtxRetain)", primary_slot(&ctx, 0),
         retain(&ctx, 0));
    /* No context is current here: INVALID_CONTEXT where the export says
     * so without failing. */
    CUresult rc = current(&ctx);
    same("CONTEXT_LOCAL_STORAGE[2] (cuCtxGetCurrent)", get_slot(&v, NULL, NULL),
         rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_CONTEXT);
    same("INTEGRITY_CHECK[1] (cuDeviceGetCount)", integrity_slot(13002, 0, digest),
         count(&n));
    same("DEVICE_EXTENDED_RT[5] (cuDeviceGetAttribute)",
         attribute_slot(0, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0, pair),
         attribute(&n, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBCUDA EXPORT_TABLES_TXT\n", argv[0]);
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL || (get_table = (export_table_fn)dlsym(lib, "cuGetExportTable")) == NULL) {
        printf("FAIL %s: %s\n", argv[1], dlerror());
        return 1;
    }
    if (read_probe(argv[2]) != 0)
        return 2;
    int known = 0;
    for (int i = 0; i < nrec; i++) {
        check_table(&rec[i]);
        known += rec[i].rc == 0;
    }
    if (known == 0 || edge_rc[0] < 0 || edge_rc[1] < 0) {
        printf("FAIL %s: no table, or no NULL-argument edges\n", argv[2]);
        return 1;
    }
    check_null_arguments();
    check_delegates();
    if (failures)
        return 1;
    printf("export tables: %d as the driver's, %d refused as by it, NULL arguments "
           "as by it, the slots that call exports as those\n", known, nrec - known);
    return 0;
}
