/*
 * The mock driver's peer access and peer copies (mock_driver.c): access
 * is enabled per peer context, once; a context is no peer of itself, as
 * a one-GPU machine answers; a copy is a move between host memory.  A
 * context's API version, which NVIDIA's runtime asks of a peer's before
 * enabling access to it.
 */
#include "be.h"

#include <string.h>

#include "mock_driver.h"

#define MOCK_PEERS 16

static CUcontext enabled[MOCK_PEERS];

/* The current context, which there must be, and a peer context. */
static CUresult current(CUcontext *ctx, CUcontext peer)
{
    CUresult r = CUDA_DRV(cuCtxGetCurrent)(ctx);
    if (r == CUDA_SUCCESS && (*ctx == NULL || peer == NULL))
        r = CUDA_ERROR_INVALID_CONTEXT;
    return r;
}

static CUcontext *slot(CUcontext peer)
{
    for (int i = 0; i < MOCK_PEERS; i++)
        if (enabled[i] == peer)
            return &enabled[i];
    return NULL;
}

static CUresult mock_enable(CUcontext peer, unsigned flags)
{
    CUcontext own;
    CUresult r = current(&own, peer);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (peer == own)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (slot(peer) != NULL)
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    CUcontext *free_slot = slot(NULL);
    if (free_slot == NULL)
        return CUDA_ERROR_TOO_MANY_PEERS;
    *free_slot = peer;
    return CUDA_SUCCESS;
}

static CUresult mock_disable(CUcontext peer)
{
    CUcontext own;
    CUresult r = current(&own, peer);
    if (r != CUDA_SUCCESS)
        return r;
    CUcontext *s = slot(peer);
    if (s == NULL)
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    *s = NULL;
    return CUDA_SUCCESS;
}

static CUresult mock_copy_peer(CUdeviceptr d, CUcontext dc, CUdeviceptr s,
                               CUcontext sc, size_t n)
{
    if (dc == NULL || sc == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}

static CUresult mock_copy_peer_async(CUdeviceptr d, CUcontext dc,
                                     CUdeviceptr s, CUcontext sc, size_t n,
                                     CUstream st)
{
    (void)st;
    return mock_copy_peer(d, dc, s, sc, n);
}

static CUresult mock_api_version(CUcontext ctx, unsigned int *version)
{
    CUcontext cur = NULL;
    (void)CUDA_DRV(cuCtxGetCurrent)(&cur);
    if (ctx == NULL && cur == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}

void mock_peer_fill(void)
{
    cuda_be_drv.cuCtxGetApiVersion = mock_api_version;
    cuda_be_drv.cuCtxEnablePeerAccess = mock_enable;
    cuda_be_drv.cuCtxDisablePeerAccess = mock_disable;
    cuda_be_drv.cuMemcpyPeer = mock_copy_peer;
    cuda_be_drv.cuMemcpyPeerAsync = mock_copy_peer_async;
}
