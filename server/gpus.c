#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpus.h"
#include "gvs/err.h"

/* The few NVML entry points used, with NVML's own types spelled out: its
 * header is not needed to build gvsd. */
typedef int nvml_return;
typedef void *nvml_device;
struct nvml_memory {
    unsigned long long total, free, used;
};

struct nvml {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*count)(unsigned *);
    nvml_return (*handle)(unsigned, nvml_device *);
    nvml_return (*name)(nvml_device, char *, unsigned);
    nvml_return (*uuid)(nvml_device, char *, unsigned);
    nvml_return (*memory)(nvml_device, struct nvml_memory *);
};

static int load(void *lib, struct nvml *n)
{
    static const char *const names[] = {
        "nvmlInit_v2",          "nvmlShutdown",
        "nvmlErrorString",      "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
        "nvmlDeviceGetUUID",    "nvmlDeviceGetMemoryInfo",
    };
    void *fn[sizeof(names) / sizeof(names[0])];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((fn[i] = dlsym(lib, names[i])) == NULL)
            return GVS_E_NOENT;
    /* POSIX guarantees data and function pointers convert. */
    memcpy(&n->init, &fn[0], sizeof(void *));
    memcpy(&n->shutdown, &fn[1], sizeof(void *));
    memcpy(&n->error_string, &fn[2], sizeof(void *));
    memcpy(&n->count, &fn[3], sizeof(void *));
    memcpy(&n->handle, &fn[4], sizeof(void *));
    memcpy(&n->name, &fn[5], sizeof(void *));
    memcpy(&n->uuid, &fn[6], sizeof(void *));
    memcpy(&n->memory, &fn[7], sizeof(void *));
    return 0;
}

static int list(const struct nvml *n, struct gvsd_gpu *out, int max,
                char *why, size_t len)
{
    unsigned count = 0;
    nvml_return r = n->count(&count);
    if (r != 0) {
        snprintf(why, len, "NVML: %s", n->error_string(r));
        return GVS_E_IO;
    }
    int got = 0;
    for (unsigned i = 0; i < count && got < max; i++) {
        struct gvsd_gpu *g = &out[got];
        struct nvml_memory m = {0};
        nvml_device d;
        memset(g, 0, sizeof(*g));
        if (n->handle(i, &d) != 0)
            continue;
        if (n->name(d, g->name, sizeof(g->name)) != 0)
            snprintf(g->name, sizeof(g->name), "?");
        if (n->uuid(d, g->uuid, sizeof(g->uuid)) != 0)
            snprintf(g->uuid, sizeof(g->uuid), "?");
        g->name[sizeof(g->name) - 1] = g->uuid[sizeof(g->uuid) - 1] = '\0';
        if (n->memory(d, &m) == 0) {
            g->memory_total = m.total;
            g->memory_used = m.used;
        }
        got++;
    }
    return got;
}

int gvsd_gpus_query(struct gvsd_gpu *out, int max, char *why, size_t len)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(why, len, "no NVML library (libnvidia-ml.so.1)");
        return GVS_E_NOENT;
    }
    struct nvml n;
    int rc = load(lib, &n);
    if (rc < 0) {
        snprintf(why, len, "NVML library lacks an entry point");
    } else {
        nvml_return r = n.init();
        if (r != 0) {
            snprintf(why, len, "NVML: %s", n.error_string(r));
            rc = GVS_E_IO;
        } else {
            rc = list(&n, out, max, why, len);
            n.shutdown();
        }
    }
    dlclose(lib);
    return rc;
}
