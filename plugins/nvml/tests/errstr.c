/*
 * gpu.nvml_errstr: nvmlErrorString's answer for every code of nvml.h's
 * nvmlReturn_t and a few past them, from whichever libnvidia-ml.so.1 the
 * loader finds: natively NVIDIA's, through gvs the frontend's; the GPU
 * label compares the two (frontend/errstr.inc must be NVIDIA's strings).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (h == NULL) {
        printf("no NVML: %s\n", dlerror());
        return 1;
    }
    const char *(*str)(int);
    *(void **)&str = dlsym(h, "nvmlErrorString");
    if (str == NULL) {
        printf("no nvmlErrorString\n");
        return 1;
    }
    static const int extra[] = {-1, 31, 100, 998, 999, 1000};
    for (int r = 0; r <= 30; r++)
        printf("%d %s\n", r, str(r));
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
        printf("%d %s\n", extra[i], str(extra[i]));
    return 0;
}
