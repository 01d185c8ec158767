/* The virtual memory API (cuda.api, docs/driver.md "Virtual memory"):
 * reservations of device address space, physical allocations (ids of
 * the session's table, GVS_RH_VMM_ALLOC, counted against the quota) and
 * the mappings between them.  The backend keeps what the session made,
 * so that the driver is asked about ranges inside the session's own
 * reservations and handles of its own only.
 *
 * The program's handles of an allocation (made, retained, imported) are
 * counted here; the driver holds one reference while there is any, so
 * that an import, which never reaches the driver (its descriptor is the
 * client's, frontend/vmm.c), is a handle like the others.  The driver
 * frees the memory once that reference and every mapping are gone, and
 * so does the quota.
 *
 * VMM calls are rare and short: one lock guards the tables, held across
 * the driver's call so that the tables and the driver agree. */
#include "be.h"

#include <pthread.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cuda_ops.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "gvs/u64map.h"
#include "../vmm_prop.h"

/* Most reservations and mappings one session may hold. */
#define RESERVATIONS_MAX 65536u
#define MAPPINGS_MAX 1048576u

struct cuda_be_vmm_alloc {
    CUmemGenericAllocationHandle h; /* the driver's, while refs > 0 */
    uint64_t id;
    uint32_t refs; /* the program's handles */
    uint32_t maps; /* mappings of it */
};

struct reservation {
    uint64_t size;
};

struct mapping {
    uint64_t size;
    struct cuda_be_vmm_alloc *a;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gvs_u64map reserved; /* base -> struct reservation */
static struct gvs_u64map mapped;   /* address -> struct mapping */
static struct gvs_u64map allocs;   /* id -> struct cuda_be_vmm_alloc */

/* Caller holds lock.  Whether [p, p + len) lies in one reservation. */
static int in_reservation(uint64_t p, uint64_t len)
{
    uint64_t base;
    struct reservation *r = gvs_u64map_floor(&reserved, p, &base);
    return r != NULL && len > 0 && p - base < r->size &&
           len <= r->size - (p - base);
}

/* Caller holds lock.  The allocation of id the program holds a handle
 * of, or NULL. */
static struct cuda_be_vmm_alloc *held(uint64_t id)
{
    struct cuda_be_vmm_alloc *a =
        gvs_handles_get(cuda_be_remote->handles(), GVS_RH_VMM_ALLOC, id);
    return a != NULL && a->refs > 0 ? a : NULL;
}

/* Enters the call and takes the lock, held on return whatever the
 * result: the allocation of id the program holds a handle of in *a, else
 * CUDA_ERROR_INVALID_VALUE. */
static CUresult enter_held(struct gvs_call *call, uint64_t id,
                           struct cuda_be_vmm_alloc **a)
{
    CUresult r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    *a = r == CUDA_SUCCESS ? held(id) : NULL;
    return r == CUDA_SUCCESS && *a == NULL ? CUDA_ERROR_INVALID_VALUE : r;
}

/* Caller holds lock.  The mapping holding p, its address in *at. */
static struct mapping *mapping_of(uint64_t p, uint64_t *at)
{
    struct mapping *m = gvs_u64map_floor(&mapped, p, at);
    return m != NULL && p - *at < m->size ? m : NULL;
}

/* Caller holds lock.  An allocation with no handle and no mapping left
 * is gone: the driver has freed its memory. */
static void settle(struct cuda_be_vmm_alloc *a)
{
    if (a->refs > 0 || a->maps > 0)
        return;
    gvs_handles_remove(cuda_be_remote->handles(), GVS_RH_VMM_ALLOC, a->id);
    gvs_u64map_remove(&allocs, a->id);
    cuda_be_remote->quota_release(GVS_RQ_VMM, a->id);
    gvs_free(a);
}

/* Caller holds lock.  The driver's reference to a, which the program
 * released while a mapping kept the memory, taken again through it. */
static CUresult retake(struct cuda_be_vmm_alloc *a)
{
    for (size_t i = 0; i < mapped.n; i++)
        if (((const struct mapping *)mapped.e[i].val)->a == a)
            return CUDA_DRV(cuMemRetainAllocationHandle)(
                &a->h, (void *)(uintptr_t)mapped.e[i].key);
    return CUDA_ERROR_INVALID_VALUE;
}

/* Caller holds lock.  One handle more of a (a retain, an import). */
static CUresult hold(struct cuda_be_vmm_alloc *a)
{
    CUresult r = a->refs == UINT32_MAX ? CUDA_ERROR_OUT_OF_MEMORY
                 : a->refs == 0        ? retake(a)
                                       : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        a->refs++;
    return r;
}

/* Caller holds lock.  The mappings inside [p, p + size) are gone. */
static void unmapped(uint64_t p, uint64_t size)
{
    uint64_t at, last = size > UINT64_MAX - p ? UINT64_MAX : p + size - 1;
    struct mapping *m;
    while (size > 0 && (m = gvs_u64map_floor(&mapped, last, &at)) != NULL &&
           at >= p) {
        struct cuda_be_vmm_alloc *a = m->a;
        gvs_free(gvs_u64map_remove(&mapped, at));
        a->maps--;
        settle(a);
    }
}

/* Request: u64 size, u64 alignment, u64 address hint, u64 flags.
 * Reply: i32, u64 the reservation's address. */
int cuda_be_mem_address_reserve(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t size, align, hint, flags;
    CUdeviceptr p = 0;
    apigen_get_u64(&c, &size);
    apigen_get_u64(&c, &align);
    apigen_get_u64(&c, &hint);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct reservation *res = gvs_malloc(sizeof(*res));
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && res == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    if (r == CUDA_SUCCESS && reserved.n >= RESERVATIONS_MAX)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemAddressReserve)(&p, (size_t)size, (size_t)align,
                                          (CUdeviceptr)hint, flags);
    if (r == CUDA_SUCCESS) {
        res->size = size;
        if (gvs_u64map_put(&reserved, p, res) < 0) {
            (void)CUDA_DRV(cuMemAddressFree)(p, (size_t)size);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            res = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    gvs_free(res);
    cuda_be_reply_id(&c, r, p);
    return c.rc;
}

/* Caller holds lock.  a in the session's table and in allocs: whether
 * it is (else it is in neither). */
static int record(struct cuda_be_vmm_alloc *a, uint64_t *id)
{
    struct gvs_handles *t = cuda_be_remote->handles();
    if (gvs_handles_add(t, GVS_RH_VMM_ALLOC, a, id) < 0)
        return 0;
    if (gvs_u64map_put(&allocs, *id, a) < 0) {
        gvs_handles_remove(t, GVS_RH_VMM_ALLOC, *id);
        return 0;
    }
    return 1;
}

/* Request: u64 size, properties, u64 flags.  Reply: i32, u64 id. */
int cuda_be_mem_create(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUmemAllocationProp prop;
    uint64_t size, flags, id = 0;
    apigen_get_u64(&c, &size);
    int fits = cuda_vmm_get_prop(&c, &prop);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (!fits)
        return GVS_E_PROTO;
    struct cuda_be_vmm_alloc *a = gvs_calloc(1, sizeof(*a));
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS && a == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS && cuda_be_remote->quota_take(size) < 0)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        r = CUDA_DRV(cuMemCreate)(&a->h, (size_t)size, &prop, flags);
        if (r == CUDA_SUCCESS && !record(a, &id)) {
            (void)CUDA_DRV(cuMemRelease)(a->h);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
        int dev = prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE
                      ? prop.location.id
                      : -1;
        cuda_be_remote->quota_settle(
            r == CUDA_SUCCESS, GVS_RQ_VMM, id,
            r == CUDA_SUCCESS ? cuda_be_quota_name(dev) : dev, 0, size, size);
        if (r == CUDA_SUCCESS) {
            a->id = id;
            a->refs = 1;
            a = NULL;
        }
        pthread_mutex_unlock(&lock);
    }
    gvs_free(a);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u64 id.  Reply: i32.  The program's last handle releases the
 * driver's. */
int cuda_be_mem_release(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cuda_be_vmm_alloc *a;
    CUresult r = enter_held(call, id, &a);
    if (r == CUDA_SUCCESS && a->refs == 1)
        r = CUDA_DRV(cuMemRelease)(a->h);
    if (r == CUDA_SUCCESS) {
        a->refs--;
        settle(a);
    }
    pthread_mutex_unlock(&lock);
    apigen_put_i32(&c, r);
    return c.rc;
}

/* Request: u64 address, u64 size, u64 offset, u64 id, u64 flags.  Reply:
 * i32, u64 base, u64 size of the mapping as the driver's address range
 * gives it, i32 the allocation's device (-1: host memory). */
int cuda_be_mem_map(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p, size, offset, id, flags;
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &size);
    apigen_get_u64(&c, &offset);
    apigen_get_u64(&c, &id);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct mapping *m = gvs_malloc(sizeof(*m));
    size_t len = (size_t)size;
    CUmemAllocationProp prop = {0};
    struct cuda_be_vmm_alloc *a;
    CUresult r = enter_held(call, id, &a);
    if (r == CUDA_SUCCESS && !in_reservation(p, size))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && (m == NULL || mapped.n >= MAPPINGS_MAX))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemMap)((CUdeviceptr)p, len, (size_t)offset, a->h,
                               flags);
    if (r == CUDA_SUCCESS) {
        *m = (struct mapping){size, a};
        if (gvs_u64map_put(&mapped, p, m) < 0) {
            (void)CUDA_DRV(cuMemUnmap)((CUdeviceptr)p, len);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            m = NULL;
            a->maps++;
            (void)CUDA_DRV(cuMemGetAllocationPropertiesFromHandle)(&prop,
                                                                   a->h);
        }
    }
    pthread_mutex_unlock(&lock);
    gvs_free(m);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS) {
        apigen_put_i32(&c, prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE
                               ? prop.location.id
                               : -1);
    }
    return c.rc;
}

/* MEM_UNMAP and MEM_ADDRESS_FREE.  Request: u64 address, u64 size.
 * Reply: i32.  The range must lie in a reservation of the session's, and
 * be one to be freed: no other reaches the driver. */
int cuda_be_mem_unmap(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    int free_it = call->op == CUDA_OP_MEM_ADDRESS_FREE;
    uint64_t p, size;
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &size);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUresult r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    struct reservation *res = gvs_u64map_get(&reserved, p);
    if (r == CUDA_SUCCESS && (free_it ? res == NULL : !in_reservation(p, size)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = free_it ? CUDA_DRV(cuMemAddressFree)((CUdeviceptr)p, (size_t)size)
                    : CUDA_DRV(cuMemUnmap)((CUdeviceptr)p, (size_t)size);
    if (r == CUDA_SUCCESS)
        unmapped(p, free_it ? res->size : size);
    if (r == CUDA_SUCCESS && free_it)
        gvs_free(gvs_u64map_remove(&reserved, p));
    pthread_mutex_unlock(&lock);
    apigen_put_i32(&c, r);
    return c.rc;
}

int cuda_be_mem_address_free(struct gvs_call *call)
{
    return cuda_be_mem_unmap(call);
}

/* Request: u8 set, u64 address, u64 size (0 for a get), the access list
 * (cuda_be_get_access).  Reply: i32, u64 the flags (get). */
int cuda_be_mem_access(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t set;
    uint64_t p, size;
    uint32_t n;
    CUmemAccessDesc *list;
    apigen_get_u8(&c, &set);
    apigen_get_u64(&c, &p);
    apigen_get_u64(&c, &size);
    if (c.rc == 0 && (set > 1 || (!set && size != 0)))
        return GVS_E_PROTO;
    if (cuda_be_get_access(&c, set, &list, &n) < 0 || apigen_end(&c) < 0)
        return c.rc;
    unsigned long long flags = 0;
    CUresult r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    if (r == CUDA_SUCCESS && !in_reservation(p, set ? size : 1))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = set ? CUDA_DRV(cuMemSetAccess)((CUdeviceptr)p, (size_t)size,
                                           list, n)
                : CUDA_DRV(cuMemGetAccess)(&flags, &list[0].location,
                                           (CUdeviceptr)p);
    pthread_mutex_unlock(&lock);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && !set)
        apigen_put_u64(&c, flags);
    return c.rc;
}

/* Request: properties, i32 option.  Reply: i32, u64 the granularity. */
int cuda_be_mem_granularity(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    CUmemAllocationProp prop;
    int32_t option;
    size_t g = 0;
    int fits = cuda_vmm_get_prop(&c, &prop);
    apigen_get_i32(&c, &option);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (!fits)
        return GVS_E_PROTO;
    CUresult r = cuda_be_enter(call);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemGetAllocationGranularity)(
            &g, &prop, (CUmemAllocationGranularity_flags)option);
    cuda_be_reply_id(&c, r, g);
    return c.rc;
}

/* Request: u64 id.  Reply: i32, properties. */
int cuda_be_mem_properties(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t id;
    CUmemAllocationProp prop = {0};
    apigen_get_u64(&c, &id);
    if (apigen_end(&c) < 0)
        return c.rc;
    struct cuda_be_vmm_alloc *a;
    CUresult r = enter_held(call, id, &a);
    if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemGetAllocationPropertiesFromHandle)(&prop, a->h);
    pthread_mutex_unlock(&lock);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS)
        cuda_vmm_put_prop(&c, &prop);
    return c.rc;
}

/* Request: u64 address.  Reply: i32, u64 the id of the allocation
 * mapped there.  An address outside the session's mappings gets the
 * driver's answer, never a handle. */
int cuda_be_mem_retain_handle(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint64_t p, at, id = 0;
    apigen_get_u64(&c, &p);
    if (apigen_end(&c) < 0)
        return c.rc;
    CUmemGenericAllocationHandle h;
    CUresult r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    struct mapping *m = r == CUDA_SUCCESS ? mapping_of(p, &at) : NULL;
    if (r == CUDA_SUCCESS && m == NULL) {
        r = CUDA_DRV(cuMemRetainAllocationHandle)(&h, (void *)(uintptr_t)p);
        if (r == CUDA_SUCCESS) {
            (void)CUDA_DRV(cuMemRelease)(h);
            r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (r == CUDA_SUCCESS)
        r = hold(m->a);
    if (r == CUDA_SUCCESS)
        id = m->a->id;
    pthread_mutex_unlock(&lock);
    cuda_be_reply_id(&c, r, id);
    return c.rc;
}

/* Request: u8 import, u64 id, i32 handle type, u64 flags (0 for an
 * import).  Reply: i32, u64 id (import).  A POSIX file descriptor is
 * the only type: the driver's export, whose descriptor is closed here,
 * says whether the allocation may be shared so. */
int cuda_be_mem_shareable(struct gvs_call *call)
{
    struct apigen_call c = {call->out, call->in, 0};
    uint8_t import;
    uint64_t id, flags;
    int32_t type;
    apigen_get_u8(&c, &import);
    apigen_get_u64(&c, &id);
    apigen_get_i32(&c, &type);
    apigen_get_u64(&c, &flags);
    if (apigen_end(&c) < 0)
        return c.rc;
    if (import > 1 || (import && flags != 0))
        return GVS_E_PROTO;
    int fd = -1;
    CUresult r = cuda_be_enter(call);
    pthread_mutex_lock(&lock);
    struct cuda_be_vmm_alloc *a =
        gvs_handles_get(cuda_be_remote->handles(), GVS_RH_VMM_ALLOC, id);
    if (r == CUDA_SUCCESS && type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        r = CUDA_ERROR_NOT_SUPPORTED;
    else if (r == CUDA_SUCCESS && (a == NULL || (!import && a->refs == 0)))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (r == CUDA_SUCCESS && import)
        r = hold(a);
    else if (r == CUDA_SUCCESS)
        r = CUDA_DRV(cuMemExportToShareableHandle)(
            &fd, a->h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, flags);
    pthread_mutex_unlock(&lock);
    if (r == CUDA_SUCCESS && !import)
        close(fd);
    apigen_put_i32(&c, r);
    if (r == CUDA_SUCCESS && import)
        apigen_put_u64(&c, id);
    return c.rc;
}

void cuda_be_vmm_free(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < mapped.n; i++)
        gvs_free(mapped.e[i].val);
    for (size_t i = 0; i < reserved.n; i++)
        gvs_free(reserved.e[i].val);
    for (size_t i = 0; i < allocs.n; i++)
        gvs_free(allocs.e[i].val);
    gvs_u64map_clear(&mapped);
    gvs_u64map_clear(&reserved);
    gvs_u64map_clear(&allocs);
    pthread_mutex_unlock(&lock);
}
