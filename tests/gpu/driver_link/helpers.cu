// What kernel.cu uses, in a unit of its own (driver_jit_link.cu).
extern "C" __device__ int helper_bias = 7;

extern "C" __device__ int helper_scale(int x)
{
    return 3 * x;
}
