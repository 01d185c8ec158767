/* An -rdc program's device code (call.h, cuda_fe_rdc_*): nvcc's
 * link.stub registers the device-linked image in a version 2 fatbinC
 * wrapper whose last field is the NULL-terminated list of the units'
 * own images.  The linked image holds code for the GPUs it was linked
 * for alone; on another GPU the driver links the units again from their
 * PTX, and so does gvs, through its own cuLink*, remoted, deciding by
 * the cubins the linked image lists (the backend's driver would load it
 * lazily and fail only at its first use). */
#include "fe.h"

#include <string.h>

#include "gvs_remote.h"

static uint64_t rd(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

/* Whether the fatbinary's entries, read within its len bytes, hold a
 * cubin that a GPU of compute capability cc runs: one of the same major
 * version and no newer minor.  An entry header: u16 kind (2: a cubin),
 * u16 flags, u32 header size, u64 payload size, ..., at 0x1c u32 the
 * architecture (major * 10 + minor). */
static int runs_on(const uint8_t *fb, size_t len, unsigned cc)
{
    enum { ENTRY_MIN = 0x20, KIND_ELF = 2 };
    if (len < 16)
        return 0;
    size_t off = (size_t)rd(fb + 6, 2);
    while (off <= len && len - off >= ENTRY_MIN) {
        const uint8_t *e = fb + off;
        uint64_t hdr = rd(e + 4, 4), size = rd(e + 8, 8);
        unsigned arch = (unsigned)rd(e + 0x1c, 4);
        if (rd(e, 2) == KIND_ELF && arch / 10 == cc / 10 &&
            arch % 10 <= cc % 10)
            return 1;
        if (hdr < ENTRY_MIN || hdr > len - off || size > len - off - hdr)
            return 0;
        off += (size_t)(hdr + size);
    }
    return 0;
}

const void *const *cuda_fe_rdc_relink(const void *code, unsigned (*cc)(void))
{
    const struct cuda_fe_fatbinc *w = code;
    const uint8_t *fb;
    if (code == NULL || w->magic != CUDA_FE_FATBINC_MAGIC || w->version != 2 ||
        w->filename_or_fatbins == NULL)
        return NULL;
    size_t len = gvs_remote_image_size(code, &fb);
    return len == 0 || runs_on(fb, len, cc()) ? NULL : w->filename_or_fatbins;
}

CUresult cuda_fe_rdc_link(const void *const *units, CUlinkState *link,
                          void **cubin, size_t *size)
{
    CUresult r = cuLinkCreate_v2(0, NULL, NULL, link);
    if (r != CUDA_SUCCESS)
        return r;
    for (size_t i = 0; r == CUDA_SUCCESS && units[i] != NULL; i++) {
        const uint8_t *start;
        size_t n = gvs_remote_image_size(units[i], &start);
        r = n == 0 ? CUDA_ERROR_INVALID_IMAGE
                   : cuLinkAddData_v2(*link, CU_JIT_INPUT_FATBINARY,
                                      (void *)start, n, NULL, 0, NULL,
                                      NULL);
    }
    if (r == CUDA_SUCCESS)
        r = cuLinkComplete(*link, cubin, size);
    if (r != CUDA_SUCCESS)
        (void)cuLinkDestroy(*link);
    return r;
}
