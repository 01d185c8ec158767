/* The unsuffixed exports old binaries link (docs/driver.md, "Legacy
 * exports") whose prototype is a current form's: driver 580 hands them
 * out only to programs asking for a CUDA version before that form
 * (plugins/cuda/probe/results), and they answer as it does.  Those that
 * differ from their current form only in how the driver tracks its own
 * objects (contexts' usage counts before CUDA 4.0, a stream or event
 * destroyed while in use) are that form here, where the client keeps
 * the context stack and the backend's table the objects;
 * cuEventElapsedTime, whose answer is the driver's, is forwarded to the
 * driver's own (cuda.api).  The 32-bit forms stay stubs
 * (unsupported.reasons). */
#include "call.h"

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

CUresult cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

CUresult cuEventDestroy(CUevent hEvent)
{
    return cuEventDestroy_v2(hEvent);
}

/* CUDA 10.1's form: the state and id alone. */
CUresult cuStreamGetCaptureInfo(CUstream hStream,
                                CUstreamCaptureStatus *captureStatus_out,
                                cuuint64_t *id_out)
{
    return cuStreamGetCaptureInfo_v2(hStream, captureStatus_out, id_out,
                                     NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                     CUstreamCaptureStatus *captureStatus_out,
                                     cuuint64_t *id_out)
{
    return cuStreamGetCaptureInfo_v2_ptsz(hStream, captureStatus_out, id_out,
                                          NULL, NULL, NULL);
}
