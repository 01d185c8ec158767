// The layer's copy kernel (copy_kernel.h): row blockIdx.y copies
// p.len[y] bytes from p.src[y] to p.dst[y], its blocks striding over
// them; ordered, the one block copies row after row, the barrier between
// two making the block's writes visible to all its threads.  Words as wide as the two addresses' distance allows (16, 4 or 1
// bytes), the bytes before the destination's first such word and after
// its last one copied alone.
#include "copy_kernel.h"

template <typename W>
__device__ static void copy_words(unsigned char *d, const unsigned char *s,
                                  unsigned long long len)
{
    unsigned long long tid =
        blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long head = (0ull - (unsigned long long)d) & (sizeof(W) - 1);
    if (head > len)
        head = len;
    if (tid < head)
        d[tid] = s[tid];
    d += head;
    s += head;
    len -= head;
    unsigned long long words = len / sizeof(W);
    W *dw = reinterpret_cast<W *>(d);
    const W *sw = reinterpret_cast<const W *>(s);
    for (unsigned long long i = tid; i < words; i += stride)
        dw[i] = sw[i];
    for (unsigned long long i = words * sizeof(W) + tid; i < len; i += stride)
        d[i] = s[i];
}

__device__ static void copy_row(const struct gvs_copy_params &p, unsigned y)
{
    unsigned char *d = reinterpret_cast<unsigned char *>(p.dst[y]);
    const unsigned char *s = reinterpret_cast<const unsigned char *>(p.src[y]);
    unsigned long long skew = p.dst[y] - p.src[y];
    if (skew % 16 == 0)
        copy_words<uint4>(d, s, p.len[y]);
    else if (skew % 4 == 0)
        copy_words<unsigned>(d, s, p.len[y]);
    else
        copy_words<unsigned char>(d, s, p.len[y]);
}

extern "C" __global__ void gvs_copies(const struct gvs_copy_params p)
{
    if (!p.ordered) {
        if (blockIdx.y < p.n)
            copy_row(p, blockIdx.y);
        return;
    }
    for (unsigned y = 0; y < p.n; y++) {
        copy_row(p, y);
        __syncthreads();
    }
}
