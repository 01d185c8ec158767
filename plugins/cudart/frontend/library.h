/*
 * Between library.c and libimage.c: the size of an image handed to
 * cudaLibraryLoadData, which takes no length.
 */
#ifndef CUDART_FE_LIBRARY_H
#define CUDART_FE_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of the image at code, as CUDA reads it: a fat binary (or
 * nvcc's wrapper of one, followed to its data), an ELF cubin (up to its
 * furthest header or section), or else NUL-terminated PTX text (its NUL
 * included).  Sets *start to the image's first byte; 0 when the image
 * is malformed or larger than a session may send. */
size_t fe_image_size(const void *code, const uint8_t **start);

#endif
