/*
 * CUDA arrays and mipmapped arrays.  The handles given to the program are
 * the backend's ids (BE_H_ARRAY, BE_H_MIPMAPPED_ARRAY) cast to pointers.
 * The frontend remembers each array's element size, which the backend
 * reports when it hands the array out: cudaMemcpy3D counts an array's
 * extent in elements, and host rows are packed here in bytes.
 */
#include "mem3d.h"

#include <pthread.h>

#include "cudart_ops.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"

struct fe_array {
    size_t elem;
    /* The mipmapped array owning this level, or the array owning this
     * plane, or 0. */
    uint64_t mipmap;
};

static pthread_mutex_t arrays_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map arrays;

static void forget_all_locked(void)
{
    for (size_t i = 0; i < arrays.n; i++)
        gvs_free(arrays.e[i].val);
    gvs_u64map_clear(&arrays);
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&arrays_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&arrays_lock);
}

/* A forked child's session is new: none of these arrays are its own. */
static void fork_child(void)
{
    forget_all_locked();
    pthread_mutex_unlock(&arrays_lock);
}

__attribute__((constructor)) static void arrays_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* 0 when it could not be recorded. */
static int remember(uint64_t id, size_t elem, uint64_t mipmap)
{
    struct fe_array *a = gvs_malloc(sizeof(*a));
    if (a == NULL)
        return 0;
    *a = (struct fe_array){elem, mipmap};
    pthread_mutex_lock(&arrays_lock);
    /* A level array handed out twice is already known. */
    int known = gvs_u64map_get(&arrays, id) != NULL;
    int ok = known || gvs_u64map_put(&arrays, id, a) == 0;
    pthread_mutex_unlock(&arrays_lock);
    if (known || !ok)
        gvs_free(a);
    return ok;
}

cudaError_t fe_array_lookup(cudaArray_const_t a, uint64_t *id, size_t *elem)
{
    *id = (uint64_t)(uintptr_t)a;
    pthread_mutex_lock(&arrays_lock);
    const struct fe_array *fa = gvs_u64map_get(&arrays, *id);
    if (fa != NULL)
        *elem = fa->elem;
    pthread_mutex_unlock(&arrays_lock);
    return fa != NULL ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                   enum cudaChannelFormatKind f)
{
    return (struct cudaChannelFormatDesc){x, y, z, w, f};
}

static void put_desc(struct apigen_call *c,
                     const struct cudaChannelFormatDesc *d)
{
    apigen_put_i32(c, d->x);
    apigen_put_i32(c, d->y);
    apigen_put_i32(c, d->z);
    apigen_put_i32(c, d->w);
    apigen_put_i32(c, d->f);
}

static void put_extent(struct apigen_call *c, struct cudaExtent e)
{
    apigen_put_u64(c, e.width);
    apigen_put_u64(c, e.height);
    apigen_put_u64(c, e.depth);
}

/* Frees a BE_H_ARRAY or BE_H_MIPMAPPED_ARRAY id with op. */
static cudaError_t free_id(uint16_t op, uint64_t id)
{
    struct apigen_call c;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, id);
    e = cudart_fe_run(&c, op, APIGEN_DEVICE);
    return cudart_fe_end(&c, e);
}

/* Reply of the calls that hand out an array: u64 id, u32 element size. */
static cudaError_t take_array(struct apigen_call *c, cudaError_t e,
                              uint64_t mipmap, cudaArray_t *out)
{
    uint64_t id = 0;
    uint32_t elem = 0;
    if (e == cudaSuccess) {
        apigen_get_u64(c, &id);
        apigen_get_u32(c, &elem);
    }
    e = cudart_fe_end(c, e);
    if (e != cudaSuccess)
        return e;
    if (!remember(id, elem, mipmap)) {
        /* The program never sees this array: nothing else would free it. */
        if (mipmap == 0)
            (void)free_id(CUDART_OP_ARRAY_FREE, id);
        return cudaErrorMemoryAllocation;
    }
    *out = (cudaArray_t)(uintptr_t)id;
    return cudaSuccess;
}

/* which: 0 cudaMallocArray, 1 cudaMalloc3DArray. */
static cudaError_t malloc_array(cudaArray_t *array,
                                const struct cudaChannelFormatDesc *desc,
                                struct cudaExtent ext, unsigned flags,
                                uint8_t which)
{
    struct apigen_call c;
    if (array == NULL || desc == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u8(&c, which);
    put_desc(&c, desc);
    put_extent(&c, ext);
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_ARRAY_MALLOC, APIGEN_DEVICE);
    return take_array(&c, e, 0, array);
}

cudaError_t cudaMallocArray(cudaArray_t *array,
                            const struct cudaChannelFormatDesc *desc,
                            size_t width, size_t height, unsigned int flags)
{
    return cudart_fe_ret(malloc_array(
        array, desc, (struct cudaExtent){width, height, 0}, flags, 0));
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array,
                              const struct cudaChannelFormatDesc *desc,
                              struct cudaExtent extent, unsigned int flags)
{
    return cudart_fe_ret(malloc_array(array, desc, extent, flags, 1));
}

static void forget_levels(uint64_t mipmap);

cudaError_t cudaFreeArray(cudaArray_t array)
{
    uint64_t id = (uint64_t)(uintptr_t)array;
    if (array == NULL)
        return cudaSuccess;
    cudaError_t e = free_id(CUDART_OP_ARRAY_FREE, id);
    if (e == cudaSuccess) {
        pthread_mutex_lock(&arrays_lock);
        gvs_free(gvs_u64map_remove(&arrays, id));
        pthread_mutex_unlock(&arrays_lock);
        forget_levels(id);
    }
    return cudart_fe_ret(e);
}

static cudaError_t array_info(struct cudaChannelFormatDesc *desc,
                              struct cudaExtent *extent, unsigned *flags,
                              cudaArray_t array)
{
    struct apigen_call c;
    struct cudaChannelFormatDesc d;
    uint64_t w, h, dp;
    int32_t f;
    uint32_t fl;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, (uint64_t)(uintptr_t)array);
    e = cudart_fe_run(&c, CUDART_OP_ARRAY_INFO, APIGEN_DEVICE);
    if (e == cudaSuccess) {
        apigen_get_i32(&c, &d.x);
        apigen_get_i32(&c, &d.y);
        apigen_get_i32(&c, &d.z);
        apigen_get_i32(&c, &d.w);
        apigen_get_i32(&c, &f);
        d.f = (enum cudaChannelFormatKind)f;
        apigen_get_u64(&c, &w);
        apigen_get_u64(&c, &h);
        apigen_get_u64(&c, &dp);
        apigen_get_u32(&c, &fl);
    }
    e = cudart_fe_end(&c, e);
    if (e != cudaSuccess)
        return e;
    if (desc != NULL)
        *desc = d;
    if (extent != NULL)
        *extent = (struct cudaExtent){(size_t)w, (size_t)h, (size_t)dp};
    if (flags != NULL)
        *flags = fl;
    return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc,
                               cudaArray_const_t array)
{
    if (desc == NULL)
        return cudart_fe_ret(cudaErrorInvalidValue);
    return cudart_fe_ret(array_info(desc, NULL, NULL, (cudaArray_t)array));
}

cudaError_t fe_array_rows(cudaArray_const_t a, size_t *row_bytes,
                          size_t *rows)
{
    uint64_t id;
    size_t elem = 0;
    struct cudaExtent ext;
    cudaError_t e = fe_array_lookup(a, &id, &elem);
    if (e == cudaSuccess)
        e = array_info(NULL, &ext, NULL, (cudaArray_t)a);
    if (e != cudaSuccess)
        return e;
    if (elem == 0 || __builtin_mul_overflow(ext.width, elem, row_bytes))
        return cudaErrorInvalidValue;
    *rows = ext.height ? ext.height : 1;
    return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc,
                             struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t array)
{
    return cudart_fe_ret(array_info(desc, extent, flags, array));
}

static cudaError_t malloc_mipmapped(cudaMipmappedArray_t *out,
                                    const struct cudaChannelFormatDesc *desc,
                                    struct cudaExtent ext, unsigned levels,
                                    unsigned flags)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (out == NULL || desc == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    put_desc(&c, desc);
    put_extent(&c, ext);
    apigen_put_u32(&c, levels);
    apigen_put_u32(&c, flags);
    e = cudart_fe_run(&c, CUDART_OP_MIPMAP_MALLOC, APIGEN_DEVICE);
    if (e == cudaSuccess)
        apigen_get_u64(&c, &id);
    e = cudart_fe_end(&c, e);
    if (e == cudaSuccess)
        *out = (cudaMipmappedArray_t)(uintptr_t)id;
    return e;
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                     const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent,
                                     unsigned int numLevels,
                                     unsigned int flags)
{
    return cudart_fe_ret(
        malloc_mipmapped(mipmappedArray, desc, extent, numLevels, flags));
}

static cudaError_t mipmap_level(cudaArray_t *out, cudaMipmappedArray_const_t m,
                                unsigned level)
{
    struct apigen_call c;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, (uint64_t)(uintptr_t)m);
    apigen_put_u32(&c, level);
    e = cudart_fe_run(&c, CUDART_OP_MIPMAP_LEVEL, APIGEN_DEVICE);
    return take_array(&c, e, (uint64_t)(uintptr_t)m, out);
}

cudaError_t cudaGetMipmappedArrayLevel(
    cudaArray_t *levelArray, cudaMipmappedArray_const_t mipmappedArray,
    unsigned int level)
{
    return cudart_fe_ret(mipmap_level(levelArray, mipmappedArray, level));
}

static cudaError_t array_plane(cudaArray_t *out, cudaArray_t a,
                               unsigned plane)
{
    struct apigen_call c;
    uint64_t id;
    size_t elem;
    if (out == NULL)
        return cudaErrorInvalidValue;
    cudaError_t e = fe_array_lookup(a, &id, &elem);
    if (e == cudaSuccess)
        e = cudart_fe_begin(&c);
    if (e != cudaSuccess)
        return e;
    apigen_put_u64(&c, id);
    apigen_put_u32(&c, plane);
    e = cudart_fe_run(&c, CUDART_OP_ARRAY_PLANE, APIGEN_DEVICE);
    return take_array(&c, e, id, out);
}

/* A plane is owned by its array, as a level by its mipmapped array. */
cudaError_t cudaArrayGetPlane(cudaArray_t *pPlaneArray, cudaArray_t hArray,
                              unsigned int planeIdx)
{
    return cudart_fe_ret(array_plane(pPlaneArray, hArray, planeIdx));
}

/* The levels (planes) go with their mipmapped array (array). */
static void forget_levels(uint64_t mipmap)
{
    pthread_mutex_lock(&arrays_lock);
    size_t i = 0;
    while (i < arrays.n) {
        struct fe_array *a = arrays.e[i].val;
        if (a->mipmap == mipmap) {
            gvs_u64map_remove(&arrays, arrays.e[i].key);
            gvs_free(a);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&arrays_lock);
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
    uint64_t id = (uint64_t)(uintptr_t)mipmappedArray;
    if (mipmappedArray == NULL)
        return cudaSuccess;
    cudaError_t e = free_id(CUDART_OP_MIPMAP_FREE, id);
    if (e == cudaSuccess)
        forget_levels(id);
    return cudart_fe_ret(e);
}
