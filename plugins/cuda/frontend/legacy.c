/* The unsuffixed exports old binaries link (docs/driver.md, "Legacy
 * exports") whose prototype is a current form's: driver 580 hands them
 * out only to programs asking for a CUDA version before that form
 * (plugins/cuda/probe/results).  Those that differed from their current
 * form in how the driver of CUDA 3.2 and 4.0 kept its objects (contexts
 * for the 32-bit API, usage counts with cuCtxAttach, objects destroyed
 * while in use: none of it served here) are that form, the client
 * keeping the context stack and the backend's tables the objects;
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
