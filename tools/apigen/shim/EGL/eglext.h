/* Stands in for the system's EGL/eglext.h (see egl.h). */
#ifndef GVS_SHIM_EGLEXT_H
#define GVS_SHIM_EGLEXT_H

typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;

#endif
