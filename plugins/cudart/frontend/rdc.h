/*
 * Relocatable device code (nvcc -rdc=true with a device link).  The
 * program registers one fat binary, the device-linked one, whose wrapper
 * also lists the relocatable fat binaries of the program's translation
 * units.  When the linked image has no code the GPU can run (built for
 * older architectures only), CUDA links the units' images itself,
 * compiling their PTX; the frontend keeps a copy of them so that the
 * backend can do the same (docs/cudart.md).
 */
#ifndef CUDART_FE_RDC_H
#define CUDART_FE_RDC_H

#include "fe.h"

struct fe_link;

/* The units' images named by a registered fat binary wrapper, copied;
 * NULL when it names none (not an -rdc program) or they cannot be
 * copied. */
struct fe_link *fe_link_capture(const void *wrapper);
void fe_link_free(struct fe_link *l);

/* Caller holds the client lock: posts the images as MODULE_LINK_STAGE
 * pieces, for the calling thread's next MODULE_LOAD. */
int fe_link_post_locked(struct gvs_client *cl, const struct fe_link *l);

#endif
