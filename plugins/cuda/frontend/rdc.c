/* An -rdc program's device code (call.h, cuda_fe_rdc_*): nvcc's
 * link.stub registers the device-linked image in a version 2 fatbinC
 * wrapper whose last field is the NULL-terminated list of the units'
 * own images.  The linked image holds code for the GPUs it was linked
 * for alone; on another GPU the driver links the units again from their
 * PTX, and so does gvs, through its own cuLink*, remoted. */
#include "fe.h"

#include "gvs_remote.h"

const void *const *cuda_fe_rdc_units(const void *code)
{
    const struct cuda_fe_fatbinc *w = code;
    if (code == NULL || w->magic != CUDA_FE_FATBINC_MAGIC || w->version != 2)
        return NULL;
    return w->filename_or_fatbins;
}

CUresult cuda_fe_rdc_link(const void *const *units, CUlinkState *link,
                          void **cubin, size_t *size)
{
    CUresult r = cuLinkCreate_v2(0, NULL, NULL, link);
    if (r != CUDA_SUCCESS)
        return r;
    for (size_t i = 0; r == CUDA_SUCCESS && units[i] != NULL; i++) {
        const uint8_t *start;
        size_t n = gvs_remote_image_size(units[i], &start);
        r = n == 0 ? CUDA_ERROR_INVALID_IMAGE
                   : cuLinkAddData_v2(*link, CU_JIT_INPUT_FATBINARY,
                                      (void *)start, n, NULL, 0, NULL,
                                      NULL);
    }
    if (r == CUDA_SUCCESS)
        r = cuLinkComplete(*link, cubin, size);
    if (r != CUDA_SUCCESS)
        (void)cuLinkDestroy(*link);
    return r;
}
