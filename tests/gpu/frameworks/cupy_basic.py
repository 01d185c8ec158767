"""CuPy: elementwise and reduction kernels (built in, and an
ElementwiseKernel and a ReductionKernel of our own), a RawKernel, cuBLAS
matmul, cuFFT, the memory pool."""
import fwcheck
import cupy as cp

print("devices", cp.cuda.runtime.getDeviceCount())
rs = cp.random.RandomState(5)
a = rs.standard_normal((512, 512), dtype=cp.float32)
b = rs.standard_normal((512, 512), dtype=cp.float32)
fwcheck.show("elementwise", cp.exp(a / 8) + b)
fwcheck.show("reduction", a.sum(axis=0))
axpy = cp.ElementwiseKernel("float32 x, float32 y, float32 k", "float32 z",
                            "z = k * x + y", "axpy")
fwcheck.show("elementwise kernel", axpy(a, b, cp.float32(2)))
l2norm = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b",
                            "y = sqrt(a)", "0", "l2norm")
norms = l2norm(a, axis=1)
fwcheck.show("reduction kernel", norms)
print("reduction kernel matches", bool(cp.allclose(
    norms, cp.sqrt((a * a).sum(axis=1)), rtol=1e-5)))
scale = cp.RawKernel(r"""
extern "C" __global__ void scale(float *x, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= k;
}""", "scale")
c = a.copy()
scale(((c.size + 255) // 256,), (256,), (c, cp.float32(3), cp.int32(c.size)))
print("raw kernel", bool(cp.allclose(c, a * 3)))
fwcheck.show("matmul", a @ b, 5)
fwcheck.show("fft", cp.abs(cp.fft.fft(a[0])), 5)
pool = cp.get_default_memory_pool()
before = pool.used_bytes()
big = cp.zeros((1 << 24,), dtype=cp.float32)
print("pool grew", pool.used_bytes() - before >= big.nbytes)
del big
pool.free_all_blocks()
print("pool back", pool.used_bytes() == before)
