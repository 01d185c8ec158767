/*
 * Texture and surface descriptions on the wire, encoded and decoded by
 * this one file on both halves: the frontend sends them to create an
 * object and decodes them from the description queries, the backend
 * decodes them from the creating request.  Floats travel as their u32
 * bits, enums as i32.
 *
 * Compiled into the frontend, the backend and the mock backend, all
 * built with hidden visibility.  On the frontend include it after fe.h.
 */
#ifndef CUDART_TEXTURE_WIRE_H
#define CUDART_TEXTURE_WIRE_H

#include <cuda_runtime_api.h>

#include "apigen_rt.h"

/* A channel format: i32 x, y, z, w, kind. */
void cudart_wire_put_channel(struct apigen_call *c,
                             const struct cudaChannelFormatDesc *d);
void cudart_wire_get_channel(struct apigen_call *c,
                             struct cudaChannelFormatDesc *d);

/* A texture description: i32 address modes (3), filter mode, read mode,
 * sRGB, u32 border color bits (4), i32 normalized coordinates, u32 max
 * anisotropy, i32 mipmap filter mode, u32 bits of the level bias and
 * clamps, i32 disable trilinear optimization, seamless cubemap.  The
 * decoder zeroes the fields the wire does not carry. */
void cudart_wire_put_texture(struct apigen_call *c,
                             const struct cudaTextureDesc *t);
void cudart_wire_get_texture(struct apigen_call *c,
                             struct cudaTextureDesc *t);

/* A resource view: i32 format, u64 width, height, depth, u32 first and
 * last mipmap level, first and last layer.  The decoder zeroes the rest
 * of *v. */
void cudart_wire_put_view(struct apigen_call *c,
                          const struct cudaResourceViewDesc *v);
void cudart_wire_get_view(struct apigen_call *c,
                          struct cudaResourceViewDesc *v);

#endif
