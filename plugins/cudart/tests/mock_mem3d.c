/*
 * Pitched memory, 2D/3D copies and memsets, CUDA arrays, texture and
 * surface objects for the host-memory mock of the CUDA runtime
 * (mock_cudart.c).  Linear "device" memory is the mock's cudaMalloc; an
 * array is a host buffer of its elements, row after row.  Texture and
 * surface objects are numbers, as CUDA's are to the host.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mock_mem.h"

#define MOCK_PITCH_ALIGN 512u

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    *pitch = (w + MOCK_PITCH_ALIGN - 1) / MOCK_PITCH_ALIGN * MOCK_PITCH_ALIGN;
    if (*pitch == 0)
        *pitch = MOCK_PITCH_ALIGN;
    return cudaMalloc(p, *pitch * (h ? h : 1));
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
    size_t pitch;
    void *p;
    cudaError_t r = cudaMallocPitch(&p, &pitch, e.width,
                                    e.height * (e.depth ? e.depth : 1));
    if (r == cudaSuccess)
        *pp = (struct cudaPitchedPtr){p, pitch, e.width, e.height};
    return r;
}

/* Arrays ------------------------------------------------------------------ */

struct cudaArray {
    struct cudaChannelFormatDesc desc;
    struct cudaExtent extent; /* as given */
    size_t w, h, d;           /* at least 1 each */
    size_t elem;
    unsigned flags;
    uint8_t *data;
};

struct cudaMipmappedArray {
    unsigned levels;
    struct cudaArray **level;
};

static struct cudaArray *array_new(const struct cudaChannelFormatDesc *desc,
                                   struct cudaExtent e, unsigned flags)
{
    /* The client's channel sizes are any ints: refused unless they make
     * whole bytes, and an array whose size overflows is refused. */
    long long bits = (long long)desc->x + desc->y + desc->z + desc->w;
    if (bits <= 0 || bits % 8 != 0 || e.width == 0)
        return NULL;
    size_t elem = (size_t)bits / 8, h = e.height ? e.height : 1,
           d = e.depth ? e.depth : 1;
    if (e.width > SIZE_MAX / elem / h / d)
        return NULL;
    struct cudaArray *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    *a = (struct cudaArray){*desc, e, e.width, e.height ? e.height : 1,
                            e.depth ? e.depth : 1, elem, flags, NULL};
    a->data = calloc(a->w * a->h * a->d, elem);
    if (a->data == NULL) {
        free(a);
        return NULL;
    }
    return a;
}

static void array_free(struct cudaArray *a)
{
    free(a->data);
    free(a);
}

cudaError_t cudaMallocArray(cudaArray_t *array,
                            const struct cudaChannelFormatDesc *desc,
                            size_t width, size_t height, unsigned int flags)
{
    *array = array_new(desc, (struct cudaExtent){width, height, 0}, flags);
    return *array != NULL ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array,
                              const struct cudaChannelFormatDesc *desc,
                              struct cudaExtent extent, unsigned int flags)
{
    *array = array_new(desc, extent, flags);
    return *array != NULL ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    array_free(array);
    return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc,
                             struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t array)
{
    *desc = array->desc;
    *extent = array->extent;
    *flags = array->flags;
    return cudaSuccess;
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *out,
                                     const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent,
                                     unsigned int levels, unsigned int flags)
{
    if (levels == 0 || levels > 16)
        return cudaErrorInvalidValue;
    struct cudaMipmappedArray *m = calloc(1, sizeof(*m));
    if (m == NULL || (m->level = calloc(levels, sizeof(*m->level))) == NULL) {
        free(m);
        return cudaErrorMemoryAllocation;
    }
    /* A level the array cannot have (bad channels, a size that
     * overflows or does not fit in memory) refuses the whole array, as
     * CUDA does. */
    for (unsigned i = 0; i < levels; i++) {
        m->level[i] = array_new(desc, extent, flags);
        if (m->level[i] == NULL) {
            cudaFreeMipmappedArray(m);
            return cudaErrorInvalidValue;
        }
        m->levels = i + 1;
        extent.width = extent.width > 1 ? extent.width / 2 : 1;
        extent.height = extent.height > 1 ? extent.height / 2 : extent.height;
    }
    *out = m;
    return cudaSuccess;
}

cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *level,
                                       cudaMipmappedArray_const_t m,
                                       unsigned int i)
{
    if (i >= m->levels)
        return cudaErrorInvalidValue;
    *level = m->level[i];
    return cudaSuccess;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t m)
{
    for (unsigned i = 0; i < m->levels; i++)
        array_free(m->level[i]);
    free(m->level);
    free(m);
    return cudaSuccess;
}

/* The mock's arrays are single-plane: plane 0 is the array itself. */
cudaError_t cudaArrayGetPlane(cudaArray_t *plane, cudaArray_t a,
                              unsigned int idx)
{
    if (idx != 0)
        return cudaErrorInvalidValue;
    *plane = a;
    return cudaSuccess;
}

static size_t array_bytes(const struct cudaArray *a)
{
    return a->w * a->h * a->d * a->elem;
}

cudaError_t cudaArrayGetMemoryRequirements(
    struct cudaArrayMemoryRequirements *r, cudaArray_t a, int device)
{
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    *r = (struct cudaArrayMemoryRequirements){.size = array_bytes(a),
                                              .alignment = 65536};
    return cudaSuccess;
}

cudaError_t cudaMipmappedArrayGetMemoryRequirements(
    struct cudaArrayMemoryRequirements *r, cudaMipmappedArray_t m,
    int device)
{
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    size_t n = 0;
    for (unsigned i = 0; i < m->levels; i++)
        n += array_bytes(m->level[i]);
    *r = (struct cudaArrayMemoryRequirements){.size = n, .alignment = 65536};
    return cudaSuccess;
}

/* Only arrays made with cudaArraySparse have sparse properties. */
static cudaError_t sparse(const struct cudaArray *a, unsigned levels,
                          struct cudaArraySparseProperties *p)
{
    if (!(a->flags & cudaArraySparse))
        return cudaErrorInvalidValue;
    *p = (struct cudaArraySparseProperties){.tileExtent = {64, 64, 1},
                                            .miptailFirstLevel = levels,
                                            .miptailSize = 0,
                                            .flags = 0};
    return cudaSuccess;
}

cudaError_t cudaArrayGetSparseProperties(struct cudaArraySparseProperties *p,
                                         cudaArray_t a)
{
    return sparse(a, 1, p);
}

cudaError_t cudaMipmappedArrayGetSparseProperties(
    struct cudaArraySparseProperties *p, cudaMipmappedArray_t m)
{
    return sparse(m->level[0], m->levels, p);
}

/* Copies ------------------------------------------------------------------ */

/* Start of row (y, z) of one end, x in its elements; NULL past an
 * array's bounds. */
static uint8_t *row(cudaArray_t a, const struct cudaPos *pos,
                    const struct cudaPitchedPtr *p, size_t width_elems,
                    size_t y, size_t z)
{
    if (a != NULL) {
        if (pos->x + width_elems > a->w || pos->y + y >= a->h ||
            pos->z + z >= a->d)
            return NULL;
        return a->data +
               (((pos->z + z) * a->h + pos->y + y) * a->w + pos->x) * a->elem;
    }
    return (uint8_t *)p->ptr +
           ((pos->z + z) * p->ysize + pos->y + y) * p->pitch + pos->x;
}

cudaError_t mock_copy3d(const struct cudaMemcpy3DParms *p)
{
    size_t elem = p->dstArray ? p->dstArray->elem
                  : p->srcArray ? p->srcArray->elem : 1;
    size_t w = p->extent.width * elem;
    if (w == 0 || p->extent.height == 0 || p->extent.depth == 0)
        return cudaSuccess;
    for (size_t z = 0; z < p->extent.depth; z++)
        for (size_t y = 0; y < p->extent.height; y++) {
            uint8_t *d = row(p->dstArray, &p->dstPos, &p->dstPtr,
                             p->extent.width, y, z);
            const uint8_t *s = row(p->srcArray, &p->srcPos, &p->srcPtr,
                                   p->extent.width, y, z);
            if (d == NULL || s == NULL)
                return cudaErrorInvalidValue;
            if (!mock_dev_ok(d, w) || !mock_dev_ok(s, w))
                return cudaErrorIllegalAddress;
            memmove(d, s, w);
        }
    return cudaSuccess;
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    mock_streams_drain();
    return mock_copy3d(p);
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
                              cudaStream_t stream)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    return e == cudaSuccess ? mock_copy3d(p) : e;
}

static cudaError_t set_rows(struct cudaPitchedPtr p, int value,
                            struct cudaExtent e)
{
    /* An empty extent sets nothing, however many rows it names. */
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return cudaSuccess;
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++) {
            uint8_t *r = (uint8_t *)p.ptr + (z * p.ysize + y) * p.pitch;
            if (!mock_dev_ok(r, e.width))
                return cudaErrorIllegalAddress;
            memset(r, value, e.width);
        }
    return cudaSuccess;
}

cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value,
                         struct cudaExtent e)
{
    mock_streams_drain();
    return set_rows(p, value, e);
}

cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value,
                              struct cudaExtent e, cudaStream_t stream)
{
    cudaError_t r = cudaStreamSynchronize(stream);
    return r == cudaSuccess ? set_rows(p, value, e) : r;
}

/* Texture and surface objects ------------------------------------------ */

static unsigned long long next_object = 0x7e0000;

cudaError_t cudaCreateTextureObject(cudaTextureObject_t *t,
                                    const struct cudaResourceDesc *r,
                                    const struct cudaTextureDesc *td,
                                    const struct cudaResourceViewDesc *v)
{
    (void)td, (void)v;
    if (r->resType == cudaResourceTypeArray && r->res.array.array == NULL)
        return cudaErrorInvalidValue;
    *t = ++next_object;
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t)
{
    (void)t;
    return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *s,
                                    const struct cudaResourceDesc *r)
{
    if (r->resType != cudaResourceTypeArray)
        return cudaErrorInvalidValue;
    *s = ++next_object;
    return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s)
{
    (void)s;
    return cudaSuccess;
}
