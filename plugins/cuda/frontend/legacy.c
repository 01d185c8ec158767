/* The unsuffixed exports old binaries link (docs/driver.md, "Legacy
 * exports") whose prototype is a current form's: driver 580 hands them
 * out only to programs asking for a CUDA version before that form
 * (plugins/cuda/probe/results).  Streams and events are their current
 * form, the backend's tables keeping the objects; cuEventElapsedTime,
 * whose answer is the driver's, is forwarded to the driver's own
 * (cuda.api).  The contexts of CUDA 3.2's API and the 32-bit forms stay
 * stubs (unsupported.reasons). */
#include "call.h"

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
