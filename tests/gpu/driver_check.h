// Shared by the test programs of the driver API alone (driver_api.cpp,
// driver_jit_link.cpp, nvrtc.cpp), which call no runtime: check.h's
// conventions in the driver's terms, and the files they read.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <string>
#include <vector>

#include "expect.h"

static inline const char *drv_name(CUresult r)
{
    const char *n = "?";
    cuGetErrorName(r, &n);
    return n;
}

#define CHECK(call)                                                          \
    do {                                                                     \
        CUresult err_ = (call);                                              \
        if (err_ != CUDA_SUCCESS) {                                          \
            printf("FAIL %s: %s (%d)\n", #call, drv_name(err_), (int)err_);  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// The whole file at path, NUL-terminated (PTX is text); empty when there
// is none.
static inline std::vector<char> read_file(const std::string &path)
{
    std::vector<char> data;
    FILE *f = fopen(path.c_str(), "rb");
    if (f == NULL)
        return data;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        data.insert(data.end(), buf, buf + n);
    fclose(f);
    data.push_back('\0');
    return data;
}

#ifdef GVS_IMAGE_DIR
// The build's image NAME.EXT (CMakeLists.txt, gvs_driver_images).
static inline std::string image_path(const char *name, const char *ext)
{
    return std::string(GVS_IMAGE_DIR) + "/" + name + "." + ext;
}

// The cubin of NAME for dev's architecture, "" where the build made none.
static inline std::string cubin_path(const char *name, CUdevice dev)
{
    int major = 0, minor = 0;
    CHECK(cuDeviceGetAttribute(
        &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    std::string p = std::string(GVS_IMAGE_DIR) + "/" + name + "_sm_" +
                    std::to_string(major * 10 + minor) + ".cubin";
    FILE *f = fopen(p.c_str(), "rb");
    if (f == NULL)
        return "";
    fclose(f);
    return p;
}
#endif
