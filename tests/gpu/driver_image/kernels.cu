// The kernels driver_api.cu loads as a fat binary, a cubin and PTX
// (driver_api.cmake); C names, so that the driver finds them as written.

// A global the program reads and writes through cuModuleGetGlobal.
extern "C" __device__ int bias = 3;

extern "C" __global__ void axpb(int *out, const int *in, int a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * in[i] + bias;
}

// Parameters of mixed sizes and alignments, packed by the program itself
// for a launch with extra.
struct Pair {
    char c;
    double d;
    int k;
};

extern "C" __global__ void mixed(long long *out, char c, double d, short s,
                                 Pair p)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = c;
        out[1] = (long long)(d * 4);
        out[2] = s;
        out[3] = p.c;
        out[4] = (long long)(p.d * 2);
        out[5] = p.k;
    }
}

// A block's sum in dynamic shared memory.
extern "C" __global__ void block_sum(int *out, const int *in)
{
    extern __shared__ int buf[];
    buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}
