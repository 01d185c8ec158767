// 256-bin byte histogram after the CUDA SDK sample of the same name:
// per-warp sub-histograms in shared memory, merged per block, then
// globally.  Times upload, 16 histogram passes and the download.
#include "bench.h"
#include <cstring>
#include <vector>

#define BINS 256
#define WARPS_PER_BLOCK 6
#define THREADS (WARPS_PER_BLOCK * 32)
#define PARTIALS 240

__global__ void histogram_partial(unsigned *partial, const unsigned *data,
                                  size_t words)
{
    __shared__ unsigned sub[WARPS_PER_BLOCK][BINS];
    for (int i = threadIdx.x; i < WARPS_PER_BLOCK * BINS; i += blockDim.x)
        (&sub[0][0])[i] = 0;
    __syncthreads();
    unsigned *mine = sub[threadIdx.x / 32];
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
         i += (size_t)blockDim.x * gridDim.x) {
        unsigned w = data[i];
        atomicAdd(&mine[w & 0xff], 1);
        atomicAdd(&mine[(w >> 8) & 0xff], 1);
        atomicAdd(&mine[(w >> 16) & 0xff], 1);
        atomicAdd(&mine[w >> 24], 1);
    }
    __syncthreads();
    for (int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        unsigned sum = 0;
        for (int w = 0; w < WARPS_PER_BLOCK; w++)
            sum += sub[w][bin];
        partial[blockIdx.x * BINS + bin] = sum;
    }
}

__global__ void histogram_merge(unsigned *hist, const unsigned *partial)
{
    unsigned sum = 0;
    for (int p = 0; p < PARTIALS; p++)
        sum += partial[p * BINS + blockIdx.x];
    hist[blockIdx.x] = sum;
}

int main()
{
    const size_t bytes = 64u << 20, words = bytes / 4;
    std::vector<unsigned> data(words);
    unsigned x = 12345;
    for (size_t i = 0; i < words; i++) {
        x = x * 1664525u + 1013904223u;
        data[i] = x;
    }
    CK(cudaFree(0));
    double t = now_s();
    unsigned *d_data, *d_partial, *d_hist;
    CK(cudaMalloc(&d_data, bytes));
    CK(cudaMalloc(&d_partial, PARTIALS * BINS * sizeof(unsigned)));
    CK(cudaMalloc(&d_hist, BINS * sizeof(unsigned)));
    CK(cudaMemcpy(d_data, data.data(), bytes, cudaMemcpyHostToDevice));
    for (int it = 0; it < 16; it++) {
        histogram_partial<<<PARTIALS, THREADS>>>(d_partial, d_data, words);
        histogram_merge<<<BINS, 1>>>(d_hist, d_partial);
    }
    unsigned hist[BINS];
    CK(cudaMemcpy(hist, d_hist, sizeof(hist), cudaMemcpyDeviceToHost));
    double elapsed = now_s() - t;
    unsigned long long ref[BINS] = {0}, total = 0;
    const unsigned char *bp = (const unsigned char *)data.data();
    for (size_t i = 0; i < bytes; i++)
        ref[bp[i]]++;
    for (int b = 0; b < BINS; b++) {
        if (ref[b] != hist[b]) {
            fprintf(stderr, "bin %d: %u, expected %llu\n", b, hist[b], ref[b]);
            return 1;
        }
        total += hist[b];
    }
    CK(cudaFree(d_data));
    CK(cudaFree(d_partial));
    CK(cudaFree(d_hist));
    report("histogram", elapsed, "s");
    return total == bytes ? 0 : 1;
}
