/* Stands in for the system's GL/gl.h when gvs_unsupported.py's stubs
 * include cuda_gl_interop.h or cudaGL.h: the types their prototypes use,
 * as OpenGL defines them. */
#ifndef GVS_SHIM_GL_H
#define GVS_SHIM_GL_H

typedef unsigned int GLenum;
typedef unsigned int GLuint;

#endif
