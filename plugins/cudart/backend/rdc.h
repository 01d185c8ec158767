/*
 * Relocatable device code (the frontend's rdc.h): an -rdc program's
 * linked image may hold no code for this GPU, built for older
 * architectures only; CUDA then links the program's units itself,
 * compiling their PTX, and so does the backend once the frontend has
 * posted the units' images (MODULE_LINK_STAGE) ahead of a second
 * MODULE_LOAD.
 */
#ifndef CUDART_BE_RDC_H
#define CUDART_BE_RDC_H

#include "be.h"

/* Loads the fat binary *image (*len bytes) for call's lane.  When the
 * lane has staged units (the frontend found the linked image unusable),
 * links them with the driver's JIT linker first and loads the result,
 * which then replaces *image and *len; if linking fails the image itself
 * is loaded.  Staged units are dropped either way. */
cudaError_t be_library_load(struct gvs_call *call, cudaLibrary_t *lib,
                            void **image, size_t *len);

/* Drops whatever the session staged (session end). */
void be_link_free(void);

#endif
