/* Modules, libraries and link inputs from files (cuModuleLoad,
 * cuLibraryLoadFromFile, cuLinkAddFile): the file is the client's, read
 * here and handed on as the data calls take an image (modules.c,
 * link.c).  A PTX file gets the NUL its text form needs. */
#include "call.h"
#include "gvs_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gvs/buf.h"
#include "gvs/mem.h"

/* The whole file at path, NUL-terminated, into *image (gvs_free it),
 * its length (without the NUL) in *size; the driver's codes for a file
 * it cannot read. */
static CUresult read_image(const char *path, uint8_t **image, size_t *size)
{
    struct stat st;
    *image = NULL;
    if (path == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = CUDA_SUCCESS;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        r = CUDA_ERROR_FILE_NOT_FOUND;
    else if (st.st_size == 0 || (uint64_t)st.st_size >= GVS_BUF_MAX_CEILING)
        r = CUDA_ERROR_INVALID_IMAGE;
    size_t len = r == CUDA_SUCCESS ? (size_t)st.st_size : 0;
    uint8_t *buf = r == CUDA_SUCCESS ? gvs_malloc(len + 1) : NULL;
    if (r == CUDA_SUCCESS && buf == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t off = 0; r == CUDA_SUCCESS && off < len;) {
        ssize_t n = read(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            r = CUDA_ERROR_FILE_NOT_FOUND;
        else
            off += (size_t)n;
    }
    close(fd);
    if (r != CUDA_SUCCESS) {
        gvs_free(buf);
        return r;
    }
    buf[len] = 0;
    *image = buf;
    *size = len;
    return CUDA_SUCCESS;
}

/* A module image: the whole file at path, whose headers must not claim
 * more than the file holds (the data calls read as far as they say). */
static CUresult read_module(const char *path, uint8_t **image)
{
    const uint8_t *start;
    size_t len;
    CUresult r = read_image(path, image, &len);
    /* Only text (no NUL in the file) may end at read_image's NUL. */
    size_t size = r == CUDA_SUCCESS
                      ? gvs_remote_image_size_in(*image, len + 1, &start)
                      : 0;
    if (r == CUDA_SUCCESS &&
        (size == 0 || (size > len && memchr(*image, 0, len) != NULL))) {
        gvs_free(*image);
        *image = NULL;
        r = CUDA_ERROR_INVALID_IMAGE;
    }
    return r;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    uint8_t *image;
    if (module == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = read_module(fname, &image);
    if (r == CUDA_SUCCESS)
        r = cuModuleLoadData(module, image);
    gvs_free(image);
    return r;
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                               CUjit_option *jitOptions,
                               void **jitOptionsValues,
                               unsigned int numJitOptions,
                               CUlibraryOption *libraryOptions,
                               void **libraryOptionValues,
                               unsigned int numLibraryOptions)
{
    uint8_t *image;
    if (library == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = read_module(fileName, &image);
    if (r == CUDA_SUCCESS)
        r = cuLibraryLoadData(library, image, jitOptions, jitOptionsValues,
                              numJitOptions, libraryOptions,
                              libraryOptionValues, numLibraryOptions);
    gvs_free(image);
    return r;
}

/* A PTX input is its text with the NUL; other inputs are their bytes. */
CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
                          const char *path, unsigned int numOptions,
                          CUjit_option *options, void **optionValues)
{
    uint8_t *image;
    size_t len;
    CUresult r = read_image(path, &image, &len);
    if (r == CUDA_SUCCESS)
        r = cuLinkAddData_v2(state, type, image,
                             type == CU_JIT_INPUT_PTX ? len + 1 : len, path,
                             numOptions, options, optionValues);
    gvs_free(image);
    return r;
}
