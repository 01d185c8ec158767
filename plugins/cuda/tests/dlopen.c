/*
 * cuda.dlopen: a program that finds the driver the way frameworks do,
 * dlopen("libcuda.so.1") and dlsym, gets the build's frontend (the path
 * given), whose stubs fail with CUDA_ERROR_NOT_SUPPORTED and say so once
 * each on stderr, and whose error strings are the driver's.
 *
 * usage: dlopen LIBCUDA_PATH, with the frontend's directory first in
 * LD_LIBRARY_PATH.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                    \
            return 1;                                                         \
        }                                                                     \
    } while (0)

typedef CUresult (*init_fn)(void);
typedef CUresult (*alloc_fn)(CUdeviceptr *dptr, size_t *size,
                             CUgraphicsResource resource);
typedef CUresult (*tid_fn)(int pid, int *tid);
typedef CUresult (*errstr_fn)(CUresult error, const char **str);

/* What the stubs must have said, in call order: once each. */
static const char expected_stderr[] =
    "gvs: cuGLInit is not supported yet\n"
    "gvs: cuGraphicsResourceGetMappedPointer_v2 is not supported yet\n"
    "gvs: cuCheckpointProcessGetRestoreThreadId is not supported yet\n";

struct alloc_call {
    alloc_fn fn;
    CUresult r;
};

static void *alloc_thread(void *arg)
{
    struct alloc_call *c = arg;
    CUdeviceptr p = 0;
    c->r = c->fn(&p, NULL, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBCUDA_PATH\n", argv[0]);
        return 2;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    EXPECT(lib != NULL);
    /* Stubs that stay stubs: GL interop, checkpointing
     * (unsupported.reasons). */
    init_fn init = (init_fn)dlsym(lib, "cuGLInit");
    alloc_fn alloc =
        (alloc_fn)dlsym(lib, "cuGraphicsResourceGetMappedPointer_v2");
    tid_fn tid = (tid_fn)dlsym(lib, "cuCheckpointProcessGetRestoreThreadId");
    errstr_fn name = (errstr_fn)dlsym(lib, "cuGetErrorName");
    errstr_fn string = (errstr_fn)dlsym(lib, "cuGetErrorString");
    EXPECT(init && alloc && tid && name && string);

    /* The build's frontend, not a driver installed on this machine. */
    Dl_info info;
    char got[PATH_MAX], want[PATH_MAX];
    EXPECT(dladdr((void *)init, &info) != 0);
    EXPECT(realpath(info.dli_fname, got) && realpath(argv[1], want));
    EXPECT(strcmp(got, want) == 0);

    /* The stubs' stderr, kept aside to be compared. */
    FILE *log = tmpfile();
    int saved = dup(STDERR_FILENO);
    EXPECT(log != NULL && saved >= 0);
    fflush(stderr);
    EXPECT(dup2(fileno(log), STDERR_FILENO) >= 0);

    CUresult r0 = init(), r1 = init();
    CUdeviceptr p = 0;
    CUresult r2 = alloc(&p, NULL, NULL);
    /* Said once per function, whichever thread calls it again. */
    pthread_t t;
    struct alloc_call c = {alloc, CUDA_SUCCESS};
    int started = pthread_create(&t, NULL, alloc_thread, &c);
    if (started == 0)
        pthread_join(t, NULL);
    int v = -1;
    CUresult r3 = tid((int)getpid(), &v);

    fflush(stderr);
    EXPECT(dup2(saved, STDERR_FILENO) >= 0);
    EXPECT(r0 == CUDA_ERROR_NOT_SUPPORTED && r1 == CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(r2 == CUDA_ERROR_NOT_SUPPORTED && p == 0);
    EXPECT(started == 0 && c.r == CUDA_ERROR_NOT_SUPPORTED);
    EXPECT(r3 == CUDA_ERROR_NOT_SUPPORTED && v == -1);
    char text[512] = {0};
    rewind(log);
    size_t n = fread(text, 1, sizeof(text) - 1, log);
    fclose(log);
    close(saved);
    if (n != strlen(expected_stderr) || memcmp(text, expected_stderr, n) != 0) {
        printf("FAIL: the stubs said\n%s\nexpected\n%s", text, expected_stderr);
        return 1;
    }

    /* Answered locally, in the driver's words. */
    const char *s = NULL;
    EXPECT(string(CUDA_ERROR_INVALID_VALUE, &s) == CUDA_SUCCESS);
    EXPECT(s != NULL && strcmp(s, "invalid argument") == 0);
    EXPECT(name(CUDA_ERROR_INVALID_VALUE, &s) == CUDA_SUCCESS);
    EXPECT(s != NULL && strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
    EXPECT(string(CUDA_ERROR_NOT_SUPPORTED, &s) == CUDA_SUCCESS);
    EXPECT(s != NULL && strcmp(s, "operation not supported") == 0);
    EXPECT(name(CUDA_SUCCESS, &s) == CUDA_SUCCESS);
    EXPECT(s != NULL && strcmp(s, "CUDA_SUCCESS") == 0);
    /* An unknown code: CUDA_ERROR_INVALID_VALUE and NULL, as the driver. */
    EXPECT(string((CUresult)5000, &s) == CUDA_ERROR_INVALID_VALUE && s == NULL);
    s = "";
    EXPECT(name((CUresult)-1, &s) == CUDA_ERROR_INVALID_VALUE && s == NULL);
    EXPECT(string(CUDA_SUCCESS, NULL) == CUDA_ERROR_INVALID_VALUE);

    EXPECT(dlclose(lib) == 0);
    printf("ok\n");
    return 0;
}
