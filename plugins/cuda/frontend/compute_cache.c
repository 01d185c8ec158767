/*
 * The compute cache (compute_cache.h): an entry is the file
 * DIR/gvs-HASH, HASH the 64-bit FNV-1a of the entry's key record in hex:
 *
 *   "gvs-cc-1"  blob(key record)  blob(the entry's bytes)
 *
 * with the key record u32 kind, blob(input), str(options), str(build),
 * all encoded with the core's buffer (gvs/buf.h).
 */
#include "compute_cache.h"

#include "gvs/buf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CC_MAGIC "gvs-cc-1"
#define CC_MAGIC_LEN 8
#define CC_DEFAULT_MAX ((uint64_t)1 << 30)
#define CC_LIMIT_MAX ((uint64_t)4 << 30)
/* Options and build strings longer than this are no caller's. */
#define CC_STR_MAX ((size_t)1 << 20)
/* What [3] hands out: this header, then the bytes, 16-byte aligned. */
#define CC_DATA_MAGIC 0x67767363632d6461ULL
#define CC_DATA_HEADER 16

struct cc_handle {
    struct gvs_buf *key; /* the key record */
    uint64_t max;        /* CUDA_CACHE_MAXSIZE when opened */
    char dir[PATH_MAX];
    char path[PATH_MAX];
};

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* The directory and the size bound the environment gives; -1 when the
 * cache is off or has no directory. */
static int cc_config(char *dir, size_t len, uint64_t *max)
{
    const char *off = getenv("CUDA_CACHE_DISABLE");
    if (off != NULL && atoi(off) != 0)
        return -1;
    *max = CC_DEFAULT_MAX;
    const char *m = getenv("CUDA_CACHE_MAXSIZE");
    if (m != NULL && *m != '\0') {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(m, &end, 10);
        if (errno == 0 && *end == '\0')
            *max = v < CC_LIMIT_MAX ? v : CC_LIMIT_MAX;
    }
    const char *p = getenv("CUDA_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    int n;
    if (p != NULL && *p != '\0')
        n = snprintf(dir, len, "%s", p);
    else if (xdg != NULL && *xdg == '/')
        n = snprintf(dir, len, "%s/gvs/ComputeCache", xdg);
    else if (home != NULL && *home == '/')
        n = snprintf(dir, len, "%s/.cache/gvs/ComputeCache", home);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

CUresult cuda_fe_cc_open(void **handle, unsigned int kind, const void *key,
                         size_t key_len, const char *options, const char *build)
{
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *handle = NULL;
    if ((key == NULL && key_len > 0) || key_len > UINT32_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    const char *opt = options != NULL ? options : "", *bld = build != NULL ? build : "";
    if (strnlen(opt, CC_STR_MAX) == CC_STR_MAX || strnlen(bld, CC_STR_MAX) == CC_STR_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    struct cc_handle *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (cc_config(h->dir, sizeof(h->dir), &h->max) < 0) {
        free(h);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    h->key = gvs_buf_new(GVS_BUF_MAX_CEILING);
    if (h->key == NULL || gvs_buf_put_u32(h->key, kind) < 0 ||
        gvs_buf_put_blob(h->key, key, key_len) < 0 || gvs_buf_put_str(h->key, opt) < 0 ||
        gvs_buf_put_str(h->key, bld) < 0) {
        gvs_buf_free(h->key);
        free(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uint64_t hash = fnv1a(gvs_buf_ptr(h->key), gvs_buf_len(h->key));
    int n = snprintf(h->path, sizeof(h->path), "%s/gvs-%016llx", h->dir,
                     (unsigned long long)hash);
    if (n < 0 || (size_t)n >= sizeof(h->path)) {
        gvs_buf_free(h->key);
        free(h);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    *handle = h;
    return CUDA_SUCCESS;
}

CUresult cuda_fe_cc_close(void *handle)
{
    struct cc_handle *h = handle;
    if (h == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    gvs_buf_free(h->key);
    free(h);
    return CUDA_SUCCESS;
}

/* The whole file at path, of at most max bytes, in a new buffer. */
static uint8_t *read_file(const char *path, uint64_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *p = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= max && (p = malloc((size_t)st.st_size)) != NULL) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got == (size_t)st.st_size) {
            *len = got;
        } else {
            free(p);
            p = NULL;
        }
    }
    close(fd);
    return p;
}

/* The entry's bytes out of a file's, where the file is this key's. */
static int parse_entry(const struct cc_handle *h, const uint8_t *file, size_t len,
                       const uint8_t **data, size_t *size)
{
    struct gvs_buf *b = gvs_buf_view(file, len);
    if (b == NULL)
        return -1;
    char magic[CC_MAGIC_LEN];
    const uint8_t *key;
    size_t key_len;
    int ok = gvs_buf_get_bytes(b, magic, sizeof(magic)) == 0 &&
             memcmp(magic, CC_MAGIC, CC_MAGIC_LEN) == 0 &&
             gvs_buf_get_blob(b, &key, &key_len) == 0 && key_len == gvs_buf_len(h->key) &&
             memcmp(key, gvs_buf_ptr(h->key), key_len) == 0 &&
             gvs_buf_get_blob(b, data, size) == 0 && gvs_buf_expect_end(b) == 0;
    gvs_buf_free(b);
    return ok ? 0 : -1;
}

CUresult cuda_fe_cc_lookup(void *handle, unsigned int flags, void **data,
                           unsigned int *size)
{
    struct cc_handle *h = handle;
    (void)flags; /* 0 in every call seen */
    if (h == NULL || data == NULL || size == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *data = NULL;
    *size = 0;
    size_t len;
    uint8_t *file = read_file(h->path, h->max + gvs_buf_len(h->key) + 64, &len);
    if (file == NULL)
        return CUDA_ERROR_NOT_FOUND;
    const uint8_t *bytes;
    size_t n;
    uint8_t *out = NULL;
    if (parse_entry(h, file, len, &bytes, &n) == 0 &&
        (out = malloc(CC_DATA_HEADER + (n > 0 ? n : 1))) != NULL) {
        uint64_t magic = CC_DATA_MAGIC;
        memcpy(out, &magic, sizeof(magic));
        memcpy(out + CC_DATA_HEADER, bytes, n);
        *data = out + CC_DATA_HEADER;
        *size = (unsigned int)n;
        /* Used now: the least recently used go first. */
        (void)utimensat(AT_FDCWD, h->path, NULL, 0);
    }
    free(file);
    return out != NULL ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuda_fe_cc_free(void *data)
{
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    uint8_t *p = (uint8_t *)data - CC_DATA_HEADER;
    uint64_t magic;
    memcpy(&magic, p, sizeof(magic));
    if (magic != CC_DATA_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(magic));
    free(p);
    return CUDA_SUCCESS;
}

/* mkdir -p, owner only. */
static int make_dirs(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1; *s != '\0'; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

struct cc_file {
    struct timespec used;
    off_t size;
    char name[32];
};

static int older(const void *a, const void *b)
{
    const struct cc_file *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* The least recently used entries removed until the directory's fit in
 * max bytes. */
static void evict(const char *dir, uint64_t max)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct cc_file *files = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, "gvs-", 4) != 0 || strlen(e->d_name) >= 32 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 64;
            struct cc_file *f = realloc(files, c * sizeof(*f));
            if (f == NULL)
                break;
            files = f;
            cap = c;
        }
        files[n].used = st.st_mtim;
        files[n].size = st.st_size;
        snprintf(files[n].name, sizeof(files[n].name), "%s", e->d_name);
        total += (uint64_t)st.st_size;
        n++;
    }
    if (total > max) {
        qsort(files, n, sizeof(*files), older);
        for (size_t i = 0; i < n && total > max; i++)
            if (unlinkat(dirfd(d), files[i].name, 0) == 0)
                total -= (uint64_t)files[i].size;
    }
    free(files);
    closedir(d);
}

/* len bytes at p into a new file of dir, renamed to path when whole. */
static void write_entry(const struct cc_handle *h, const uint8_t *p, size_t len)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s/.gvs-tmp-%ld-%ld", h->dir, (long)getpid(),
                     (long)gettid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (close(fd) == 0 && done == len && rename(tmp, h->path) == 0)
        return;
    unlink(tmp);
}

CUresult cuda_fe_cc_store(void *handle, unsigned int flags, const void *data,
                          size_t size)
{
    struct cc_handle *h = handle;
    (void)flags;
    if (h == NULL || (data == NULL && size > 0))
        return CUDA_ERROR_INVALID_VALUE;
    /* An entry larger than the cache is not kept, as NVIDIA's driver
     * keeps none; that is no failure of the caller's. */
    size_t key_len = gvs_buf_len(h->key);
    if (size > UINT32_MAX || size > h->max || key_len + size + 64 > GVS_BUF_MAX_CEILING ||
        make_dirs(h->dir) < 0)
        return CUDA_SUCCESS;
    struct gvs_buf *b = gvs_buf_new(GVS_BUF_MAX_CEILING);
    if (b == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (gvs_buf_put_bytes(b, CC_MAGIC, CC_MAGIC_LEN) == 0 &&
        gvs_buf_put_blob(b, gvs_buf_ptr(h->key), key_len) == 0 &&
        gvs_buf_put_blob(b, data, size) == 0) {
        write_entry(h, gvs_buf_ptr(b), gvs_buf_len(b));
        evict(h->dir, h->max);
    }
    gvs_buf_free(b);
    return CUDA_SUCCESS;
}
