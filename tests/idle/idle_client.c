/*
 * A client that opens its session and then does nothing: one CUDA call
 * (cudaGetDeviceCount, through whichever libcudart.so.13 the loader
 * finds), then it sleeps until stdin closes.  idle.py starts many.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    void *h = dlopen("libcudart.so.13", RTLD_NOW);
    int (*count)(int *) = NULL;
    if (h != NULL)
        *(void **)&count = dlsym(h, "cudaGetDeviceCount");
    if (count == NULL) {
        fprintf(stderr, "idle_client: no libcudart.so.13: %s\n", dlerror());
        return 1;
    }
    int n = 0;
    printf("%d\n", count(&n));
    fflush(stdout);
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    return 0;
}
