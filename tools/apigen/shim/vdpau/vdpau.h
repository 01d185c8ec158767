/* Stands in for the system's vdpau/vdpau.h when gvs_unsupported.py's
 * stubs include cuda_vdpau_interop.h or cudaVDPAU.h: the types their
 * prototypes use, as VDPAU defines them. */
#ifndef GVS_SHIM_VDPAU_H
#define GVS_SHIM_VDPAU_H

#include <stdint.h>

typedef uint32_t VdpDevice;
typedef uint32_t VdpFuncId;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef enum { VDP_STATUS_OK = 0 } VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
                                    void **function_pointer);

#endif
