/*
 * The mock driver's arrays, mipmapped arrays, 3D copies and texture and
 * surface objects (mock_driver.c): arrays of 1-, 2- and 4-byte channels
 * held in host memory, rows packed, bounds checked as the driver checks
 * them.  Objects are values counted up from 1.
 */
#include "be.h"

#include <stdlib.h>
#include <string.h>

#include "mock_driver.h"

/* What the mock holds at most, in all: a larger array is out of memory. */
#define MOCK_ARRAY_BYTES ((size_t)64 << 20)
#define MOCK_LEVELS 16

/* Every array and mipmapped array is on a list while it lives, as a
 * driver holds its objects until the process ends: the backend lets go
 * of its handles at session close. */
struct mock_array {
    CUDA_ARRAY3D_DESCRIPTOR d;
    size_t elem;
    uint8_t *bytes;
    int owned; /* a level of a mipmapped array */
    struct mock_array *next;
};

struct mock_mipmap {
    unsigned levels;
    struct mock_array *level[MOCK_LEVELS];
    struct mock_mipmap *next;
};

static size_t held;
static struct mock_array *arrays;
static struct mock_mipmap *mipmaps;

/* The formats the mock holds, with their channels' bytes. */
static const struct {
    CUarray_format f;
    size_t bytes;
} formats[] = {
    {CU_AD_FORMAT_UNSIGNED_INT8, 1},  {CU_AD_FORMAT_SIGNED_INT8, 1},
    {CU_AD_FORMAT_UNSIGNED_INT16, 2}, {CU_AD_FORMAT_SIGNED_INT16, 2},
    {CU_AD_FORMAT_HALF, 2},           {CU_AD_FORMAT_UNSIGNED_INT32, 4},
    {CU_AD_FORMAT_SIGNED_INT32, 4},   {CU_AD_FORMAT_FLOAT, 4},
};

static size_t format_bytes(CUarray_format f)
{
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (formats[i].f == f)
            return formats[i].bytes;
    return 0;
}

static size_t dim(size_t n)
{
    return n ? n : 1;
}

static size_t array_size(const struct mock_array *a)
{
    return a->d.Width * a->elem * dim(a->d.Height) * dim(a->d.Depth);
}

static CUresult make(const CUDA_ARRAY3D_DESCRIPTOR *d, int owned,
                     struct mock_array **out)
{
    size_t elem = format_bytes(d->Format) * d->NumChannels;
    if (d->Width == 0 || elem == 0 || d->NumChannels > 4 ||
        (d->Depth > 0 && d->Height == 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (d->Width > MOCK_ARRAY_BYTES || dim(d->Height) > MOCK_ARRAY_BYTES ||
        dim(d->Depth) > MOCK_ARRAY_BYTES ||
        d->Width * elem * dim(d->Height) * dim(d->Depth) >
            MOCK_ARRAY_BYTES - held)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct mock_array *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->d = *d;
    a->elem = elem;
    a->owned = owned;
    a->bytes = calloc(1, array_size(a));
    if (a->bytes == NULL) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    held += array_size(a);
    a->next = arrays;
    arrays = a;
    *out = a;
    return CUDA_SUCCESS;
}

static void drop(struct mock_array *a)
{
    struct mock_array **p = &arrays;
    while (*p != a)
        p = &(*p)->next;
    *p = a->next;
    held -= array_size(a);
    free(a->bytes);
    free(a);
}

static CUresult mock_array_create(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d)
{
    CUDA_ARRAY3D_DESCRIPTOR d3 = {d->Width, d->Height, 0, d->Format,
                                  d->NumChannels, 0};
    return make(&d3, 0, (struct mock_array **)h);
}

static CUresult mock_array3d_create(CUarray *h,
                                    const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    return make(d, 0, (struct mock_array **)h);
}

static CUresult mock_array_destroy(CUarray h)
{
    struct mock_array *a = (struct mock_array *)h;
    if (a->owned)
        return CUDA_ERROR_INVALID_VALUE;
    drop(a);
    return CUDA_SUCCESS;
}

static CUresult mock_descriptor3d(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray h)
{
    *d = ((struct mock_array *)h)->d;
    return CUDA_SUCCESS;
}

static CUresult mock_descriptor(CUDA_ARRAY_DESCRIPTOR *d, CUarray h)
{
    const struct mock_array *a = (const struct mock_array *)h;
    if (a->d.Depth > 0)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUDA_ARRAY_DESCRIPTOR){a->d.Width, a->d.Height, a->d.Format,
                                 a->d.NumChannels};
    return CUDA_SUCCESS;
}

static CUresult mock_requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *r,
                                  CUarray h, CUdevice dev)
{
    (void)dev;
    memset(r, 0, sizeof(*r));
    r->size = array_size((struct mock_array *)h);
    r->alignment = 512;
    return CUDA_SUCCESS;
}

static CUresult mock_not_sparse(void *props, void *h)
{
    (void)props, (void)h;
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_plane(CUarray *plane, CUarray h, unsigned idx)
{
    (void)plane, (void)h, (void)idx;
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult mock_mipmap_create(CUmipmappedArray *h,
                                   const CUDA_ARRAY3D_DESCRIPTOR *d,
                                   unsigned levels)
{
    if (levels == 0 || levels > MOCK_LEVELS)
        return CUDA_ERROR_INVALID_VALUE;
    struct mock_mipmap *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUDA_ARRAY3D_DESCRIPTOR l = *d;
    CUresult r = CUDA_SUCCESS;
    for (m->levels = 0; m->levels < levels && r == CUDA_SUCCESS;) {
        r = make(&l, 1, &m->level[m->levels]);
        if (r == CUDA_SUCCESS)
            m->levels++;
        l.Width = l.Width > 1 ? l.Width / 2 : 1;
        l.Height = l.Height > 1 ? l.Height / 2 : l.Height;
        l.Depth = l.Depth > 1 ? l.Depth / 2 : l.Depth;
    }
    if (r != CUDA_SUCCESS) {
        while (m->levels > 0)
            drop(m->level[--m->levels]);
        free(m);
        return r;
    }
    m->next = mipmaps;
    mipmaps = m;
    *h = (CUmipmappedArray)m;
    return CUDA_SUCCESS;
}

static CUresult mock_mipmap_level(CUarray *a, CUmipmappedArray h,
                                  unsigned level)
{
    struct mock_mipmap *m = (struct mock_mipmap *)h;
    if (level >= m->levels)
        return CUDA_ERROR_INVALID_VALUE;
    *a = (CUarray)m->level[level];
    return CUDA_SUCCESS;
}

static CUresult mock_mipmap_destroy(CUmipmappedArray h)
{
    struct mock_mipmap *m = (struct mock_mipmap *)h, **p = &mipmaps;
    while (*p != m)
        p = &(*p)->next;
    *p = m->next;
    while (m->levels > 0)
        drop(m->level[--m->levels]);
    free(m);
    return CUDA_SUCCESS;
}

static CUresult mock_mipmap_requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *r,
                                         CUmipmappedArray h, CUdevice dev)
{
    const struct mock_mipmap *m = (const struct mock_mipmap *)h;
    (void)dev;
    memset(r, 0, sizeof(*r));
    for (unsigned i = 0; i < m->levels; i++)
        r->size += array_size(m->level[i]);
    r->alignment = 512;
    return CUDA_SUCCESS;
}

/* Whether the box of p fits in array a at (x, y, z), in whole elements. */
static int fits(const struct mock_array *a, size_t x, size_t y, size_t z,
                const CUDA_MEMCPY3D *p)
{
    size_t row = a->d.Width * a->elem;
    return x <= row && p->WidthInBytes <= row - x &&
           x % a->elem == 0 && p->WidthInBytes % a->elem == 0 &&
           y <= dim(a->d.Height) && p->Height <= dim(a->d.Height) - y &&
           z <= dim(a->d.Depth) && p->Depth <= dim(a->d.Depth) - z;
}

/* Row y of slice z of one side of a copy whose box was checked. */
static uint8_t *row(CUmemorytype type, const void *host, CUdeviceptr dev,
                    CUarray array, size_t x, size_t y, size_t z,
                    size_t pitch, size_t height)
{
    const struct mock_array *a = (const struct mock_array *)array;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        return (uint8_t *)host + (z * height + y) * pitch + x;
    case CU_MEMORYTYPE_DEVICE:
        return (uint8_t *)(uintptr_t)dev + (z * height + y) * pitch + x;
    default:
        return a->bytes + (z * dim(a->d.Height) + y) * a->d.Width * a->elem +
               x;
    }
}

static int side_ok(CUmemorytype type, CUarray array, size_t x, size_t y,
                   size_t z, const CUDA_MEMCPY3D *p)
{
    if (type == CU_MEMORYTYPE_ARRAY)
        return fits((const struct mock_array *)array, x, y, z, p);
    return type == CU_MEMORYTYPE_HOST || type == CU_MEMORYTYPE_DEVICE;
}

static CUresult mock_copy3d(const CUDA_MEMCPY3D *p)
{
    if (!side_ok(p->dstMemoryType, p->dstArray, p->dstXInBytes, p->dstY,
                 p->dstZ, p) ||
        !side_ok(p->srcMemoryType, p->srcArray, p->srcXInBytes, p->srcY,
                 p->srcZ, p))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t z = 0; z < p->Depth; z++)
        for (size_t y = 0; y < p->Height; y++)
            memmove(row(p->dstMemoryType, p->dstHost, p->dstDevice,
                        p->dstArray, p->dstXInBytes, p->dstY + y,
                        p->dstZ + z, p->dstPitch, p->dstHeight),
                    row(p->srcMemoryType, p->srcHost, p->srcDevice,
                        p->srcArray, p->srcXInBytes, p->srcY + y,
                        p->srcZ + z, p->srcPitch, p->srcHeight),
                    p->WidthInBytes);
    return CUDA_SUCCESS;
}

static CUresult mock_copy3d_async(const CUDA_MEMCPY3D *p, CUstream s)
{
    (void)s;
    return mock_copy3d(p);
}

static unsigned long long next_object = 1;

static CUresult mock_tex_create(CUtexObject *t, const CUDA_RESOURCE_DESC *r,
                                const CUDA_TEXTURE_DESC *td,
                                const CUDA_RESOURCE_VIEW_DESC *v)
{
    (void)td, (void)v;
    if (r->resType != CU_RESOURCE_TYPE_ARRAY &&
        r->resType != CU_RESOURCE_TYPE_MIPMAPPED_ARRAY &&
        r->res.linear.devPtr == 0)
        return CUDA_ERROR_INVALID_VALUE;
    *t = next_object++;
    return CUDA_SUCCESS;
}

static CUresult mock_surf_create(CUsurfObject *s, const CUDA_RESOURCE_DESC *r)
{
    if (r->resType != CU_RESOURCE_TYPE_ARRAY)
        return CUDA_ERROR_INVALID_VALUE;
    *s = next_object++;
    return CUDA_SUCCESS;
}

static CUresult mock_object_destroy(unsigned long long v)
{
    (void)v;
    return CUDA_SUCCESS;
}

void mock_arrays_fill(void)
{
    cuda_be_drv.cuArrayCreate_v2 = mock_array_create;
    cuda_be_drv.cuArray3DCreate_v2 = mock_array3d_create;
    cuda_be_drv.cuArrayDestroy = mock_array_destroy;
    cuda_be_drv.cuArrayGetDescriptor_v2 = mock_descriptor;
    cuda_be_drv.cuArray3DGetDescriptor_v2 = mock_descriptor3d;
    cuda_be_drv.cuArrayGetMemoryRequirements = mock_requirements;
    *(void **)&cuda_be_drv.cuArrayGetSparseProperties = (void *)mock_not_sparse;
    *(void **)&cuda_be_drv.cuMipmappedArrayGetSparseProperties =
        (void *)mock_not_sparse;
    cuda_be_drv.cuArrayGetPlane = mock_plane;
    cuda_be_drv.cuMipmappedArrayCreate = mock_mipmap_create;
    cuda_be_drv.cuMipmappedArrayGetLevel = mock_mipmap_level;
    cuda_be_drv.cuMipmappedArrayDestroy = mock_mipmap_destroy;
    cuda_be_drv.cuMipmappedArrayGetMemoryRequirements =
        mock_mipmap_requirements;
    cuda_be_drv.cuMemcpy3D_v2 = mock_copy3d;
    cuda_be_drv.cuMemcpy3DAsync_v2 = mock_copy3d_async;
    cuda_be_drv.cuTexObjectCreate = mock_tex_create;
    cuda_be_drv.cuSurfObjectCreate = mock_surf_create;
    cuda_be_drv.cuTexObjectDestroy = mock_object_destroy;
    cuda_be_drv.cuSurfObjectDestroy = mock_object_destroy;
}
