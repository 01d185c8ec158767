// The kernel driver_jit_link.cu links with helpers.cu at run time: it
// uses a function and a variable defined there (relocatable device code).
extern "C" __device__ int helper_scale(int x);
extern "C" __device__ int helper_bias;

extern "C" __global__ void apply(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = helper_scale(p[i]) + helper_bias;
}
