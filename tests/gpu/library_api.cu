// The library API (CUDA Runtime API, "Library Management"): an image
// loaded from memory and from a file, its kernels counted, enumerated,
// found by name and launched with cudaLaunchKernel and
// cudaLaunchKernelExC, a global read and written, the errors of unknown
// names, missing files and unloaded libraries.
#include "check.h"

#include <cstring>
#include <vector>

static std::vector<char> read_image()
{
    std::vector<char> img;
    FILE *f = fopen(LIBRARY_IMAGE, "rb");
    EXPECT(f != NULL);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        img.insert(img.end(), buf, buf + n);
    fclose(f);
    return img;
}

static void use(cudaLibrary_t lib, const char *how)
{
    unsigned count = 0;
    CHECK(cudaLibraryGetKernelCount(&count, lib));
    printf("%s: %u kernels\n", how, count);
    std::vector<cudaKernel_t> all(count);
    CHECK(cudaLibraryEnumerateKernels(all.data(), count, lib));
    cudaKernel_t scale, offset;
    CHECK(cudaLibraryGetKernel(&scale, lib, "scale"));
    CHECK(cudaLibraryGetKernel(&offset, lib, "offset"));
    int found = 0;
    for (unsigned i = 0; i < count; i++)
        found += all[i] == scale || all[i] == offset;
    printf("enumerated both: %d\n", found == 2);
    cudaKernel_t none;
    printf("unknown kernel: %s\n",
           cudaGetErrorName(cudaLibraryGetKernel(&none, lib, "nope")));

    int *factor;
    size_t bytes = 0;
    CHECK(cudaLibraryGetGlobal((void **)&factor, &bytes, lib, "factor"));
    int f = 0;
    CHECK(cudaMemcpy(&f, factor, sizeof(f), cudaMemcpyDeviceToHost));
    printf("factor: %d (%zu bytes)\n", f, bytes);
    f = 5;
    CHECK(cudaMemcpy(factor, &f, sizeof(f), cudaMemcpyDefault));

    const int n = 256;
    int host[n], *d;
    for (int i = 0; i < n; i++)
        host[i] = i;
    CHECK(cudaMalloc(&d, sizeof(host)));
    CHECK(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice));
    int nn = n, by = 7;
    void *sargs[] = {&d, &nn};
    CHECK(cudaLaunchKernel((const void *)scale, dim3(n / 64), dim3(64), sargs,
                           0, 0));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(n / 128);
    cfg.blockDim = dim3(128);
    void *oargs[] = {&d, &nn, &by};
    CHECK(cudaLaunchKernelExC(&cfg, (const void *)offset, oargs));
    CHECK(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost));
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += host[i];
    printf("sum: %ld, host[10]: %d\n", sum, host[10]);
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, (const void *)scale));
    printf("scale: %d local bytes, max threads %d\n", (int)a.localSizeBytes,
           a.maxThreadsPerBlock);
    CHECK(cudaFree(d));
}

int main()
{
    std::vector<char> img = read_image();
    cudaLibrary_t mem, file;
    CHECK(cudaLibraryLoadData(&mem, img.data(), NULL, NULL, 0, NULL, NULL, 0));
    use(mem, "from memory");
    CHECK(cudaLibraryLoadFromFile(&file, LIBRARY_IMAGE, NULL, NULL, 0, NULL,
                                  NULL, 0));
    use(file, "from file");
    CHECK(cudaLibraryUnload(file));
    CHECK(cudaLibraryUnload(mem));
    cudaLibrary_t missing;
    printf("missing file: %s\n",
           cudaGetErrorName(cudaLibraryLoadFromFile(
               &missing, LIBRARY_IMAGE ".missing", NULL, NULL, 0, NULL, NULL,
               0)));
    (void)cudaGetLastError();
    printf("done\n");
    return 0;
}
