/*
 * cuda.integrity_driver (label gpu): NVIDIA's driver answers its
 * integrity check (INTEGRITY_CHECK slot 1) with what cuda_fe_integrity
 * computes over the same inputs, read from the driver: its table and
 * function addresses, this process and thread, the time, its version and
 * its devices' UUIDs and PCI ids.  For several versions, on two threads.
 *
 * The driver is loaded by its versioned file (libcuda.so.580.xx), found
 * as the probe's run.sh finds it, so that gvs's libcuda.so.1 first in the
 * library path is never taken for it.  Exit status 77 (skipped) where
 * there is no driver or no GPU.
 */
#include "exports.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SKIP 77
#define MAX_DEVICES 64

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*export_table_fn)(const void **, const CUuuid *);
typedef CUresult (*int_fn)(int *);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*attribute_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*integrity_fn)(unsigned int, unsigned long long, unsigned long long *);

static struct {
    void *handle;
    const void *cudart_table, *integrity_table;
    integrity_fn check;
    int version;
    struct cuda_fe_integrity_dev dev[MAX_DEVICES];
    int ndev;
} drv;

/* NVIDIA's name for the file: libcuda.so.<driver version>. */
static int versioned(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    return strncmp(base, "libcuda.so.", 11) == 0 && strcmp(base, "libcuda.so.1") != 0 &&
           strchr(base + 11, '.') != NULL;
}

/* dlopen of the driver behind a libcuda.so.1, if that is one. */
static void *open_versioned(const char *libcuda_so_1)
{
    char real[PATH_MAX];
    if (realpath(libcuda_so_1, real) == NULL || !versioned(real))
        return NULL;
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (h != NULL)
        printf("driver: %s\n", real);
    return h;
}

/* ldconfig's libcuda.so.1 (the first of this machine's kind), else the
 * one the loader finds. */
static void *open_driver(void)
{
    void *h = NULL;
    FILE *p = popen("/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null", "r");
    char line[PATH_MAX + 64];
    while (p != NULL && h == NULL && fgets(line, sizeof line, p)) {
        const char *arrow = strstr(line, " => ");
        if (strstr(line, "\tlibcuda.so.1 (") != line || arrow == NULL)
            continue;
        line[strcspn(line, "\n")] = '\0';
        h = open_versioned(arrow + 4);
    }
    if (p != NULL)
        pclose(p);
    if (h != NULL)
        return h;
    void *any = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    Dl_info info;
    void *sym = any != NULL ? dlsym(any, "cuGetExportTable") : NULL;
    if (sym != NULL && dladdr(sym, &info) && info.dli_fname != NULL)
        h = open_versioned(info.dli_fname);
    if (any != NULL)
        dlclose(any);
    return h;
}

/* dlsym into a function pointer. */
static void *sym(const char *name)
{
    void *p = dlsym(drv.handle, name);
    if (p == NULL)
        printf("FAIL the driver lacks %s\n", name);
    return p;
}

static const void *export_table(export_table_fn get, const char *hex)
{
    CUuuid u;
    for (int i = 0; i < 16; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        u.bytes[i] = (char)b;
    }
    const void *t = NULL;
    return get(&t, &u) == CUDA_SUCCESS ? t : NULL;
}

/* 0 when the driver is ready: loaded, initialized, its inputs read;
 * SKIP without a driver or a GPU, 1 when something fails. */
static int load(void)
{
    drv.handle = open_driver();
    if (drv.handle == NULL) {
        printf("no NVIDIA driver (libcuda.so.<version>) on this machine\n");
        return SKIP;
    }
    init_fn init = (init_fn)sym("cuInit");
    export_table_fn get = (export_table_fn)sym("cuGetExportTable");
    int_fn driver_version = (int_fn)sym("cuDriverGetVersion");
    int_fn count = (int_fn)sym("cuDeviceGetCount");
    device_get_fn device_get = (device_get_fn)sym("cuDeviceGet");
    uuid_fn uuid = (uuid_fn)sym("cuDeviceGetUuid_v2");
    attribute_fn attribute = (attribute_fn)sym("cuDeviceGetAttribute");
    if (!init || !get || !driver_version || !count || !device_get || !uuid || !attribute)
        return 1;
    CUresult rc = init(0);
    if (rc != CUDA_SUCCESS) {
        printf("cuInit: %d: no usable GPU\n", (int)rc);
        return SKIP;
    }
    drv.cudart_table = export_table(get, "6bd5fb6c5bf4e74a8987d93912fd9df9");
    drv.integrity_table = export_table(get, "d4082055bde6704b8d34ba123c66e1f2");
    if (drv.cudart_table == NULL || drv.integrity_table == NULL) {
        printf("FAIL the driver has no CUDART_INTERFACE or INTEGRITY_CHECK table\n");
        return 1;
    }
    memcpy(&drv.check, (const char *)drv.integrity_table + 8, sizeof drv.check);
    if (driver_version(&drv.version) != CUDA_SUCCESS || count(&drv.ndev) != CUDA_SUCCESS ||
        drv.ndev > MAX_DEVICES) {
        printf("FAIL cuDriverGetVersion or cuDeviceGetCount\n");
        return 1;
    }
    for (int i = 0; i < drv.ndev; i++) {
        struct cuda_fe_integrity_dev *d = &drv.dev[i];
        CUdevice dev;
        CUuuid u;
        if (device_get(&dev, i) != CUDA_SUCCESS || uuid(&u, dev) != CUDA_SUCCESS ||
            attribute(&d->pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) ||
            attribute(&d->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) ||
            attribute(&d->pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev)) {
            printf("FAIL device %d: its UUID or PCI ids\n", i);
            return 1;
        }
        memcpy(d->uuid, u.bytes, sizeof d->uuid);
        printf("device %d: pci %04x:%02x:%02x\n", i, (unsigned)d->pci_domain,
               (unsigned)d->pci_bus, (unsigned)d->pci_device);
    }
    printf("driver version %d, %d device(s)\n", drv.version, drv.ndev);
    return 0;
}

/* The driver's answer and gvs's for one version, on the calling thread;
 * 1 when they agree. */
static int compare(unsigned int version, const char *thread)
{
    unsigned long long out[2] = {0, 0};
    uint64_t seconds = (uint64_t)time(NULL);
    CUresult rc = drv.check(version, seconds, out);
    void *fn;
    memcpy(&fn, &drv.check, sizeof fn);
    const struct cuda_fe_integrity_in in = {
        .driver_version = (uint32_t)drv.version,
        .version = version,
        .pid = (uint32_t)getpid(),
        .thread = (uint32_t)(uintptr_t)pthread_self(),
        .cudart_table = (uintptr_t)drv.cudart_table,
        .integrity_table = (uintptr_t)drv.integrity_table,
        .integrity_fn = (uintptr_t)fn,
        .unix_seconds = seconds,
        .ndevices = drv.ndev,
        .devices = drv.dev,
    };
    uint64_t want[2];
    cuda_fe_integrity(&in, want);
    int ok = rc == CUDA_SUCCESS && out[0] == want[0] && out[1] == want[1];
    printf("%s version %u: driver rc %d 0x%016llx 0x%016llx, gvs 0x%016" PRIx64
           " 0x%016" PRIx64 " %s\n",
           thread, version, (int)rc, out[0], out[1], want[0], want[1], ok ? "==" : "!=");
    return ok;
}

/* The runtime of CUDA 13.0 asks for 13000, 13001 and 13002; the others
 * are more of the general case. */
static const unsigned int versions[] = {13000, 13001, 13002, 12085, 13005, 13019};
#define NVERSIONS (sizeof versions / sizeof versions[0])

static void *other_thread(void *arg)
{
    int *agreed = arg;
    for (size_t i = 0; i < NVERSIONS; i++)
        *agreed += compare(versions[i], "thread 2:");
    return NULL;
}

int main(void)
{
    int rc = load();
    if (rc != 0)
        return rc;
    int agreed = 0, agreed2 = 0;
    for (size_t i = 0; i < NVERSIONS; i++)
        agreed += compare(versions[i], "thread 1:");
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, &agreed2) != 0)
        return 1;
    pthread_join(t, NULL);
    if (agreed + agreed2 != 2 * (int)NVERSIONS) {
        printf("FAIL integrity: gvs != driver\n");
        return 1;
    }
    printf("integrity: gvs == driver\n");
    return 0;
}
