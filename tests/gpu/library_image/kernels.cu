// The image tests/gpu/library_api.cu loads with the library API, built
// into a fat binary of its own (library_api.cmake).  C linkage keeps the
// names the program asks for unmangled.
extern "C" __device__ int factor = 3;

extern "C" __global__ void scale(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= factor;
}

extern "C" __global__ void offset(int *p, int n, int by)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += by;
}
