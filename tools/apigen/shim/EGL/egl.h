/* Stands in for the system's EGL/egl.h when gvs_unsupported.py's stubs
 * include cuda_egl_interop.h or cudaEGL.h: the types their prototypes use,
 * as Khronos defines them. */
#ifndef GVS_SHIM_EGL_H
#define GVS_SHIM_EGL_H

#include <stdint.h>

typedef int32_t EGLint;

#endif
