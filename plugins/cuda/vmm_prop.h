/*
 * The wire form of a CUmemAllocationProp (cuda.api, "The virtual memory
 * API"), which both halves of the driver plugin write and read:
 * frontend/vmm.c and backend/vmm.c.  Included after cuda.h.
 */
#ifndef CUDA_VMM_PROP_H
#define CUDA_VMM_PROP_H

#include "apigen_rt.h"

/* win32HandleMetaData, a pointer into the program that Linux requires to
 * be NULL, does not travel. */
static inline void cuda_vmm_put_prop(struct apigen_call *c,
                                     const CUmemAllocationProp *prop)
{
    apigen_put_i32(c, prop->type);
    apigen_put_i32(c, prop->requestedHandleTypes);
    apigen_put_i32(c, prop->location.type);
    apigen_put_i32(c, prop->location.id);
    apigen_put_u8(c, prop->allocFlags.compressionType);
    apigen_put_u8(c, prop->allocFlags.gpuDirectRDMACapable);
    apigen_put_u32(c, prop->allocFlags.usage);
}

/* Whether the usage read fits its 16 bits. */
static inline int cuda_vmm_get_prop(struct apigen_call *c,
                                    CUmemAllocationProp *prop)
{
    int32_t type, handles, ltype, lid;
    uint8_t compression, rdma;
    uint32_t usage;
    apigen_get_i32(c, &type);
    apigen_get_i32(c, &handles);
    apigen_get_i32(c, &ltype);
    apigen_get_i32(c, &lid);
    apigen_get_u8(c, &compression);
    apigen_get_u8(c, &rdma);
    apigen_get_u32(c, &usage);
    *prop = (CUmemAllocationProp){0};
    prop->type = (CUmemAllocationType)type;
    prop->requestedHandleTypes = (CUmemAllocationHandleType)handles;
    prop->location.type = (CUmemLocationType)ltype;
    prop->location.id = lid;
    prop->allocFlags.compressionType = compression;
    prop->allocFlags.gpuDirectRDMACapable = rdma;
    prop->allocFlags.usage = (unsigned short)usage;
    return usage <= 0xffff;
}

#endif
