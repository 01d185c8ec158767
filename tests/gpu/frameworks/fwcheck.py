"""What the framework scripts share: deterministic settings and the one
way they print a result, so that the native run and the run through gvs
can be compared line for line (tests/gpu/compare.py)."""
import os

# cuBLAS picks reproducible reductions only with a fixed workspace.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def show(name, value, digits=6):
    """Prints a tensor's or array's sum and largest magnitude, rounded to
    digits significant digits: identical runs print identical lines."""
    v = value.astype("float64") if hasattr(value, "astype") else value.double()
    total = float(v.sum())
    peak = float(abs(v).max())
    print(f"{name}: sum {total:.{digits}e} max {peak:.{digits}e}")
