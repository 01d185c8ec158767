// Kernel parameters of every shape: scalars of mixed widths with padding,
// structs, and blocks past 4 KiB up to near the 32764-byte limit.
#include "check.h"
#include <cstdint>

struct Mixed {
    char c;
    double d;
    int a[3];
};

struct Big {
    float v[1100]; // 4400 bytes
};

struct Huge {
    int v[7500]; // 30000 bytes
};

__global__ void padded(char c, double d, char c2, short s, int64_t l,
                       float f, unsigned char u, double *out)
{
    out[0] = c;
    out[1] = d;
    out[2] = c2;
    out[3] = s;
    out[4] = (double)l;
    out[5] = f;
    out[6] = u;
}

__global__ void with_struct(Mixed m, int scale, double *out)
{
    out[0] = m.c * scale;
    out[1] = m.d * scale;
    out[2] = (m.a[0] + m.a[1] + m.a[2]) * scale;
}

__global__ void big_param(int tag, Big b, double *out)
{
    double s = 0;
    for (int i = 0; i < 1100; i++)
        s += b.v[i];
    out[0] = s + tag;
}

__global__ void huge_param(Huge h, char tail, double *out)
{
    long long s = 0;
    for (int i = 0; i < 7500; i++)
        s += h.v[i];
    out[0] = (double)s;
    out[1] = tail;
}

__global__ void no_params(int *flag) { *flag = 7; }

static Huge huge_value;

int main()
{
    double *out;
    double h[8];
    CHECK(cudaMalloc(&out, 8 * sizeof(double)));

    padded<<<1, 1>>>('x', 3.25, 'y', (short)-1234, -9876543210LL, 1.5f,
                     (unsigned char)200, out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, out, 7 * sizeof(double), cudaMemcpyDeviceToHost));
    printf("padded: %.0f %.2f %.0f %.0f %.0f %.2f %.0f\n", h[0], h[1], h[2],
           h[3], h[4], h[5], h[6]);

    Mixed m = {'A', 2.5, {10, 20, 30}};
    with_struct<<<1, 1>>>(m, 3, out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, out, 3 * sizeof(double), cudaMemcpyDeviceToHost));
    printf("struct: %.1f %.1f %.1f\n", h[0], h[1], h[2]);

    Big b;
    for (int i = 0; i < 1100; i++)
        b.v[i] = (float)(i % 13);
    big_param<<<1, 1>>>(5, b, out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, out, sizeof(double), cudaMemcpyDeviceToHost));
    printf("big (%zu bytes): %.1f\n", sizeof(Big), h[0]);

    for (int i = 0; i < 7500; i++)
        huge_value.v[i] = i;
    huge_param<<<1, 1>>>(huge_value, 'z', out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, out, 2 * sizeof(double), cudaMemcpyDeviceToHost));
    printf("huge (%zu bytes): %.0f %.0f\n", sizeof(Huge), h[0], h[1]);

    int *flag;
    CHECK(cudaMalloc(&flag, sizeof(int)));
    no_params<<<1, 1>>>(flag);
    CHECK(cudaGetLastError());
    int f = 0;
    CHECK(cudaMemcpy(&f, flag, sizeof(int), cudaMemcpyDeviceToHost));
    printf("no params: %d\n", f);

    void *args[] = {&flag};
    f = 0;
    CHECK(cudaMemset(flag, 0, sizeof(int)));
    CHECK(cudaLaunchKernel((const void *)no_params, dim3(1), dim3(1), args, 0,
                           nullptr));
    CHECK(cudaMemcpy(&f, flag, sizeof(int), cudaMemcpyDeviceToHost));
    printf("cudaLaunchKernel: %d\n", f);

    CHECK(cudaFree(flag));
    CHECK(cudaFree(out));
    return 0;
}
