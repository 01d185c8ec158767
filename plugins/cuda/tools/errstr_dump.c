/*
 * Writes the frontend's table of CUresult names and strings
 * (plugins/cuda/frontend/errstr.inc) from NVIDIA's driver, so that
 * cuGetErrorName and cuGetErrorString answer in its words exactly.  The
 * toolkit has no copy of them (its stub libcuda.so answers
 * CUDA_ERROR_STUB_LIBRARY), so this runs on a machine with the real
 * driver, after a toolkit or driver update:
 *
 *     cmake --build build --target cuda_errstr
 *
 * The test cuda.errstr compares instead.  Usage: errstr_dump OUT.inc.
 * The driver is loaded as programs load it, dlopen("libcuda.so.1"):
 * without one, the exit status is 77.  It fails when the library it
 * reached is no working driver (gvs's frontend first in the library
 * path, say), or when the driver answers an unknown code otherwise than
 * frontend/errors.c does (CUDA_ERROR_INVALID_VALUE and NULL).
 */
#include <dlfcn.h>
#include <stdio.h>

#include <cuda.h>
#include <cudaTypedefs.h>

/* Codes past the last one known when this was written leave room for
 * later drivers. */
#define LAST_CODE 1100
/* Far outside any code NVIDIA uses. */
#define UNKNOWN_CODE 0x7fffffff
/* ctest's "skipped". */
#define NO_DRIVER 77

static void put_cstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fprintf(f, "\\%03o", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.inc\n", argv[0]);
        return 2;
    }
    void *drv = dlopen("libcuda.so.1", RTLD_NOW);
    if (drv == NULL) {
        fprintf(stderr, "errstr_dump: no driver: %s\n", dlerror());
        return NO_DRIVER;
    }
    PFN_cuDriverGetVersion_v2020 driver_version =
        (PFN_cuDriverGetVersion_v2020)dlsym(drv, "cuDriverGetVersion");
    PFN_cuGetErrorName_v6000 error_name =
        (PFN_cuGetErrorName_v6000)dlsym(drv, "cuGetErrorName");
    PFN_cuGetErrorString_v6000 error_string =
        (PFN_cuGetErrorString_v6000)dlsym(drv, "cuGetErrorString");
    int version = 0;
    CUresult r = driver_version != NULL ? driver_version(&version)
                                        : CUDA_ERROR_NOT_FOUND;
    if (r != CUDA_SUCCESS || error_name == NULL || error_string == NULL) {
        fprintf(stderr, "errstr_dump: the libcuda.so.1 found is not NVIDIA's "
                        "driver (cuDriverGetVersion: %d)\n", (int)r);
        return 1;
    }
    const char *name = "", *str = "";
    CUresult rn = error_name((CUresult)UNKNOWN_CODE, &name);
    CUresult rs = error_string((CUresult)UNKNOWN_CODE, &str);
    if (rn != CUDA_ERROR_INVALID_VALUE || name != NULL ||
        rs != CUDA_ERROR_INVALID_VALUE || str != NULL) {
        fprintf(stderr, "errstr_dump: the driver answers an unknown code "
                        "with %d/%p and %d/%p: update frontend/errors.c\n",
                (int)rn, (const void *)name, (int)rs, (const void *)str);
        return 1;
    }
    FILE *f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "/* CUresult names and strings of NVIDIA's driver (CUDA %d), "
               "in code order:\n * {code, cuGetErrorName, cuGetErrorString}.  "
               "Written by\n * plugins/cuda/tools/errstr_dump; do not edit. */\n",
            version);
    for (int code = 0; code <= LAST_CODE; code++) {
        if (error_name((CUresult)code, &name) != CUDA_SUCCESS)
            continue;
        if (error_string((CUresult)code, &str) != CUDA_SUCCESS) {
            fprintf(stderr, "errstr_dump: %s has a name but no string\n", name);
            fclose(f);
            return 1;
        }
        fprintf(f, "{%d, ", code);
        put_cstr(f, name);
        fprintf(f, ", ");
        put_cstr(f, str);
        fprintf(f, "},\n");
    }
    return fclose(f) == 0 ? 0 : 1;
}
