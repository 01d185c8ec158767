/* The virtual memory API (cuda.api, docs/driver.md "Virtual memory"): a
 * CUmemGenericAllocationHandle here is the id of the session's table the
 * backend gave; a mapped range is device memory here (unified copies,
 * pointer attributes, cuMemGetAddressRange: memory.c) until it is
 * unmapped.
 *
 * A shareable handle (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) is the
 * worker's descriptor natively, which cannot reach the program: the
 * program gets a descriptor of its own instead, a sealed memfd that
 * holds the allocation's id, which it may dup, pass to itself over a
 * socket or keep; importing it names the id again.  A descriptor of
 * anything else is refused as the driver refuses one that holds no
 * allocation (CUDA_ERROR_UNKNOWN); one of another session's allocation
 * names none of this session's (CUDA_ERROR_INVALID_VALUE). */
#include "call.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_fe_gen.h"
#include "cuda_ops.h"
#include "../vmm_prop.h"

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                             CUdeviceptr addr, unsigned long long flags)
{
    uint64_t in[4] = {size, alignment, addr, flags}, p = 0;
    if (ptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_call_ids(CUDA_OP_MEM_ADDRESS_RESERVE, in, 4, &p);
    if (r == CUDA_SUCCESS)
        *ptr = (CUdeviceptr)p;
    return r;
}

/* An unmap, or a reservation's free (which takes the mappings left in
 * it along): the range's mappings are no device memory here any more. */
static CUresult unmap(uint16_t op, CUdeviceptr ptr, size_t size)
{
    uint64_t in[2] = {ptr, size};
    CUresult r = cuda_fe_call_ids(op, in, 2, NULL);
    if (r == CUDA_SUCCESS)
        cuda_fe_mem_forget_range(ptr, size);
    return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    return unmap(CUDA_OP_MEM_ADDRESS_FREE, ptr, size);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    struct apigen_call c;
    uint64_t id = 0;
    if (handle == NULL || prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, size);
    cuda_vmm_put_prop(&c, prop);
    apigen_put_u64(&c, flags);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEM_CREATE, &id);
    if (r == CUDA_SUCCESS)
        *handle = id;
    return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    uint64_t id = handle;
    return cuda_fe_call_ids(CUDA_OP_MEM_RELEASE, &id, 1, NULL);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                  CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    struct apigen_call c;
    int32_t dev = -1;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, ptr);
    apigen_put_u64(&c, size);
    apigen_put_u64(&c, offset);
    apigen_put_u64(&c, handle);
    apigen_put_u64(&c, flags);
    r = cuda_fe_run(&c, CUDA_OP_MEM_MAP, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        apigen_get_i32(&c, &dev);
    r = cuda_fe_end(&c, r);
    /* Each mapping is a range of its own to cuMemGetAddressRange, as the
     * driver answers once its access is set. */
    if (r == CUDA_SUCCESS)
        cuda_fe_mem_note(ptr, size, (CUdevice)dev);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    return unmap(CUDA_OP_MEM_UNMAP, ptr, size);
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
                        const CUmemAccessDesc *desc, size_t count)
{
    struct apigen_call c;
    if ((desc == NULL && count > 0) || count > CUDA_FE_ACCESS_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, 1);
    apigen_put_u64(&c, ptr);
    apigen_put_u64(&c, size);
    cuda_fe_put_access(&c, desc, count);
    return cuda_fe_run_u64(&c, CUDA_OP_MEM_ACCESS, NULL);
}

CUresult cuMemGetAccess(unsigned long long *flags,
                        const CUmemLocation *location, CUdeviceptr ptr)
{
    struct apigen_call c;
    uint64_t f = 0;
    if (flags == NULL || location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, 0);
    apigen_put_u64(&c, ptr);
    apigen_put_u64(&c, 0);
    cuda_fe_put_access(&c, &(CUmemAccessDesc){*location, 0}, 1);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEM_ACCESS, &f);
    if (r == CUDA_SUCCESS)
        *flags = f;
    return r;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity,
                                       const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    struct apigen_call c;
    uint64_t g = 0;
    if (granularity == NULL || prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    cuda_vmm_put_prop(&c, prop);
    apigen_put_i32(&c, option);
    r = cuda_fe_run_u64(&c, CUDA_OP_MEM_GRANULARITY, &g);
    if (r == CUDA_SUCCESS)
        *granularity = (size_t)g;
    return r;
}

CUresult cuMemGetAllocationPropertiesFromHandle(
    CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    struct apigen_call c;
    CUmemAllocationProp got;
    if (prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u64(&c, handle);
    r = cuda_fe_run(&c, CUDA_OP_MEM_PROPERTIES, APIGEN_DEVICE);
    if (r == CUDA_SUCCESS)
        (void)cuda_vmm_get_prop(&c, &got);
    r = cuda_fe_end(&c, r);
    if (r == CUDA_SUCCESS)
        *prop = got;
    return r;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
                                     void *addr)
{
    uint64_t p = (uint64_t)(uintptr_t)addr, id = 0;
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuda_fe_call_ids(CUDA_OP_MEM_RETAIN_HANDLE, &p, 1, &id);
    if (r == CUDA_SUCCESS)
        *handle = id;
    return r;
}

/* What a shareable handle of ours holds: the magic, then the id. */
static const char magic[8] = "gvs-vmm";
#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* A new descriptor standing for id, or -1 (errno) when the OS refused. */
static int descriptor_of(uint64_t id)
{
    uint8_t body[sizeof(magic) + sizeof(id)];
    memcpy(body, magic, sizeof(magic));
    memcpy(body + sizeof(magic), &id, sizeof(id));
    int fd = memfd_create("gvs-vmm-handle", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (pwrite(fd, body, sizeof(body), 0) != (ssize_t)sizeof(body) ||
        fcntl(fd, F_ADD_SEALS, SEALS) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The id a descriptor of ours stands for: 0 for any other descriptor. */
static uint64_t id_of(int fd)
{
    uint8_t body[sizeof(magic) + sizeof(uint64_t)];
    uint64_t id = 0;
    if (fcntl(fd, F_GET_SEALS) != SEALS ||
        pread(fd, body, sizeof(body), 0) != (ssize_t)sizeof(body) ||
        memcmp(body, magic, sizeof(magic)) != 0)
        return 0;
    memcpy(&id, body + sizeof(magic), sizeof(id));
    return id;
}

/* Export (import 0) or import (1) of id by the backend; *out the id an
 * import gives. */
static CUresult shareable(int import, uint64_t id,
                          CUmemAllocationHandleType type,
                          unsigned long long flags, uint64_t *out)
{
    struct apigen_call c;
    CUresult r = cuda_fe_begin(&c);
    if (r != CUDA_SUCCESS)
        return r;
    apigen_put_u8(&c, (uint8_t)import);
    apigen_put_u64(&c, id);
    apigen_put_i32(&c, type);
    apigen_put_u64(&c, flags);
    return cuda_fe_run_u64(&c, CUDA_OP_MEM_SHAREABLE, out);
}

CUresult cuMemExportToShareableHandle(void *shareableHandle,
                                      CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType,
                                      unsigned long long flags)
{
    if (shareableHandle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = shareable(0, handle, handleType, flags, NULL);
    if (r != CUDA_SUCCESS)
        return r;
    int fd = descriptor_of(handle);
    if (fd < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    *(int *)shareableHandle = fd;
    return CUDA_SUCCESS;
}

/* osHandle is the descriptor itself, cast to a pointer, as for the
 * driver. */
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                        void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    uint64_t id = 0;
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return shareable(1, 0, shHandleType, 0, &id);
    /* Any other descriptor: what driver 580 answers one that holds no
     * allocation. */
    uint64_t want = id_of((int)(intptr_t)osHandle);
    if (want == 0)
        return CUDA_ERROR_UNKNOWN;
    CUresult r = shareable(1, want, shHandleType, 0, &id);
    if (r == CUDA_SUCCESS)
        *handle = id;
    return r;
}
