/* The sizes of module images, which the load calls take without one
 * (gvs_remote.h).  Every read stays inside what the headers read so far
 * say the image holds. */
#include "gvs_remote.h"

#include <stdint.h>
#include <string.h>

#include "gvs/buf.h"

#define FATBINC_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_HDR_MIN 16u
#define ELF_HDR_LEN 64u
#define ELF_SHDR_MIN 40u
#define SHT_NOBITS 8u

static uint64_t rd(const uint8_t *p, size_t off, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p + off, n);
    return v;
}

/* lim: the bytes that may be read, and the image's largest size. */
static size_t fatbin_size(const uint8_t *p, uint64_t lim)
{
    if (lim < FATBIN_HDR_MIN)
        return 0;
    uint64_t hdr = rd(p, 6, 2), fat = rd(p, 8, 8);
    if (hdr < FATBIN_HDR_MIN || hdr > lim || fat > lim - hdr)
        return 0;
    return (size_t)(hdr + fat);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* A 64-bit little-endian ELF file, as every cubin is. */
static size_t elf_size(const uint8_t *p, uint64_t lim)
{
    if (lim < ELF_HDR_LEN || p[4] != 2 || p[5] != 1)
        return 0;
    uint64_t phoff = rd(p, 0x20, 8), shoff = rd(p, 0x28, 8);
    uint64_t phent = rd(p, 0x36, 2), phnum = rd(p, 0x38, 2);
    uint64_t shent = rd(p, 0x3A, 2), shnum = rd(p, 0x3C, 2);
    if (phoff > lim || shoff > lim || (shnum > 0 && shent < ELF_SHDR_MIN))
        return 0;
    uint64_t end = max64(ELF_HDR_LEN, phoff + phent * phnum);
    end = max64(end, shoff + shent * shnum);
    if (end > lim)
        return 0;
    for (uint64_t i = 0; i < shnum; i++) {
        const uint8_t *sh = p + shoff + i * shent;
        uint64_t off = rd(sh, 0x18, 8), size = rd(sh, 0x20, 8);
        if (rd(sh, 4, 4) == SHT_NOBITS)
            continue;
        if (off > lim || size > lim - off)
            return 0;
        end = max64(end, off + size);
    }
    return end <= lim ? (size_t)end : 0;
}

/* The image at code of at most avail bytes (SIZE_MAX: memory, whose
 * bound the headers give). */
static size_t measure(const void *code, size_t avail, const uint8_t **start)
{
    const uint8_t *p = code;
    uint64_t lim = avail < GVS_BUF_MAX_CEILING ? avail : GVS_BUF_MAX_CEILING;
    /* No magic number holds a zero byte: shorter text is PTX. */
    size_t head = strnlen((const char *)p, lim < 4 ? (size_t)lim : 4);
    uint32_t magic = head == 4 ? (uint32_t)rd(p, 0, 4) : 0;
    if (magic == FATBINC_MAGIC) {
        struct {
            int32_t magic;
            int32_t version;
            const void *data;
        } w;
        /* A wrapper points to its fat binary elsewhere in memory. */
        if (avail != SIZE_MAX)
            return 0;
        memcpy(&w, p, sizeof(w));
        p = w.data;
        if (p == NULL || (uint32_t)rd(p, 0, 4) != FATBIN_MAGIC)
            return 0;
        magic = FATBIN_MAGIC;
    }
    *start = p;
    if (magic == FATBIN_MAGIC)
        return fatbin_size(p, lim);
    if (head == 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
        return elf_size(p, lim);
    size_t n = strnlen((const char *)p, (size_t)lim);
    return n < lim ? n + 1 : 0;
}

__attribute__((visibility("default"))) size_t
gvs_remote_image_size(const void *code, const uint8_t **start)
{
    return measure(code, SIZE_MAX, start);
}

__attribute__((visibility("default"))) size_t
gvs_remote_image_size_in(const void *code, size_t avail,
                         const uint8_t **start)
{
    return measure(code, avail, start);
}
