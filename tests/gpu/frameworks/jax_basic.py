"""JAX on the GPU: jax.devices() reports the GPU platform (the script
exits non-zero otherwise, so that a silent fallback to the CPU cannot
pass), a jitted matmul, a grad and a vmap run on it, each checked
against NumPy on the host.  Set before jax is imported: no
preallocation (XLA would take 75% of the GPU's memory) and no
autotuning (XLA would time candidate GEMM kernels and might choose
another one through gvs than natively).  Matmuls at full fp32 precision.
Arrays are brought to the host (NumPy) before fwcheck.show sums them."""
import os

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_gpu_autotune_level=0").strip()

import sys  # noqa: E402

import fwcheck  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
devices = jax.devices()
platform = devices[0].platform
print("platform", platform, "devices", len(devices))
if platform != "gpu":
    sys.exit(f"jax_basic.py: JAX runs on {platform}, not on the GPU")
gpu = devices[0]

k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
a = jax.random.normal(k1, (512, 512), jnp.float32)
b = jax.random.normal(k2, (512, 512), jnp.float32)
w = jax.random.normal(k3, (512, 16), jnp.float32) / 16
an, bn, wn = (np.asarray(v, np.float64) for v in (a, b, w))

c = jax.jit(jnp.matmul)(a, b)
print("on the GPU", c.devices() == {gpu})
c = np.asarray(c)
fwcheck.show("jit matmul", c, 5)
print("matmul matches numpy", np.allclose(c, an @ bn, rtol=1e-4, atol=1e-3))


def loss(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)


g = np.asarray(jax.jit(jax.grad(loss))(w, a))
t = np.tanh(an @ wn)
ref = an.T @ (2 * t * (1 - t * t)) / t.size
fwcheck.show("grad", g, 5)
print("grad matches numpy", np.allclose(g, ref, rtol=1e-3, atol=1e-6))

rows = jax.vmap(lambda v: jnp.tanh(v @ w))(a)
print("vmap on the GPU", rows.devices() == {gpu})
rows = np.asarray(rows)
fwcheck.show("vmap", rows, 5)
print("vmap matches numpy", np.allclose(rows, np.tanh(an @ wn), rtol=1e-4,
                                        atol=1e-5))
