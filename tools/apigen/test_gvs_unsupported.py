#!/usr/bin/env python3
"""Unit tests of gvs_unsupported.py and gvs_elf.py.

usage: test_gvs_unsupported.py [--api cudart|cuda] [--exports FILE]
                               CC LIB CUDA_INCLUDE_DIR...

CC compiles the test objects and checks the stubs of every export of LIB
(the toolkit's libcudart.so.13, or its stubs/libcuda.so with --api cuda),
or of every function FILE lists, against the toolkit's headers."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gvs_elf  # noqa: E402
import gvs_unsupported as gu  # noqa: E402

CC = LIB = EXPORTS = None
API = gu.CUDART
INCLUDES = []
# The frontend's fe.h, reduced to what the stubs use.
FE_H = {
    "cudart": "#include <cuda_runtime_api.h>\ncudaError_t cudart_fe_ret(cudaError_t r);\n",
    "cuda": "#define __CUDA_API_VERSION_INTERNAL\n#include <cuda.h>\n",
}

RUNTIME_API = """\
#define cudaA __CUDART_API_PTDS(cudaA)
/* cudaB(int) in a comment is no declaration */
extern __host__ __cudart_builtin__ cudaError_t CUDARTAPI cudaA(int *x,
        unsigned int flags __dv(0));
#if defined(__cplusplus)
extern __host__ cudaError_t CUDARTAPI cudaB(void **p, int *st = NULL);
#else
extern __host__ cudaError_t CUDARTAPI cudaB(void **ptr, int *st);
#endif
extern __host__ struct cudaChannelFormatDesc CUDARTAPI cudaC(int, const void *);
extern cudaError_t cudaD(void (*cb)(void *, int), const char *fmt, ...);
static inline cudaError_t cudaE(void) { return cudaA(0, 0); }
extern void cudaE(void);
"""


def include_dir(tmp, api, text):
    """A toolkit whose main header is text, its other headers empty."""
    for header, _ in api.headers:
        path = os.path.join(tmp, header)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text if header == api.base_header else "")
    return tmp


def prototypes(text, wanted, api=gu.CUDART):
    with tempfile.TemporaryDirectory() as tmp:
        return gu.read_prototypes(api, [include_dir(tmp, api, text)], set(wanted), CC)


class Prototypes(unittest.TestCase):
    def test_declarations(self):
        p = prototypes(RUNTIME_API, ["cudaA", "cudaA_ptds", "cudaB", "cudaC", "cudaD", "cudaE"])
        self.assertEqual(p["cudaA"].c_declarator(),
                         "cudaError_t cudaA(int *x, unsigned int flags)")
        self.assertTrue(p["cudaA"].c_visible)
        self.assertEqual(p["cudaA_ptds"].c_declarator(),
                         "cudaError_t cudaA_ptds(int *x, unsigned int flags)")
        self.assertFalse(p["cudaA_ptds"].c_visible)
        # The first declaration wins; the C one agrees on the types.
        self.assertEqual(p["cudaB"].c_declarator(), "cudaError_t cudaB(void **p, int *st)")
        self.assertEqual(p["cudaC"].c_declarator(),
                         "struct cudaChannelFormatDesc cudaC(int arg0, const void *arg1)")
        self.assertEqual(p["cudaD"].c_declarator(),
                         "cudaError_t cudaD(void (*cb)(void *, int), const char *fmt, ...)")
        self.assertEqual(p["cudaE"].c_declarator(), "void cudaE(void)")
        self.assertIn("return (struct cudaChannelFormatDesc){0, 0, 0, 0, "
                      "cudaChannelFormatKindNone};", gu.stub(gu.CUDART, p["cudaC"]))

    def test_undeclared(self):
        p = prototypes("", ["__cudaGetProcAddress", "__cudaRegisterUnifiedTable"])
        self.assertEqual(p["__cudaGetProcAddress"].c_declarator(),
                         "void *__cudaGetProcAddress(void)")
        self.assertIn("return NULL;", gu.stub(gu.CUDART, p["__cudaGetProcAddress"]))
        self.assertNotIn("return", gu.stub(gu.CUDART, p["__cudaRegisterUnifiedTable"]))

    def assertFails(self, text, wanted, message, api=gu.CUDART):
        with self.assertRaises(gu.GenError) as cm:
            prototypes(text, wanted, api)
        self.assertIn(message, str(cm.exception))

    def test_errors(self):
        self.assertFails("", ["cudaNowhere"], "no toolkit header declares cudaNowhere")
        self.assertFails("extern int cudaF(int a);\nextern int cudaF(long a);\n",
                         ["cudaF"], "cudaF is declared as int cudaF(long a) here")
        self.assertFails("extern NEW_ANNOTATION int cudaF(void);\n", ["cudaF"],
                         "unknown annotation NEW_ANNOTATION")
        self.assertFails("extern float cudaF(void);\n", ["cudaF"],
                         "cudaF returns float: choose its failure value")

    # The driver's way: one name, three ABIs, told apart by the macros
    # of the driver's own build.
    DRIVER_API = """\
#ifdef __CUDA_API_VERSION_INTERNAL
#define PTDS(api) api ## _ptds
#else
#define PTDS(api) api
#endif
#define cuA PTDS(cuA_v2)
#define cuB cuB_v2
typedef int CUresult;
typedef CUresult (*PFN_cuB)(int x);
CUresult CUDAAPI_NONE cuA(int *p,
    unsigned n);
CUresult cuB(long x);
static inline CUresult cuC(void) { return cuB(0); }
#ifdef __CUDA_API_VERSION_INTERNAL
#undef cuA
#undef cuB
CUresult cuA(int *p);
CUresult cuA_v2(int *p, unsigned n);
CUresult cuB(int x);
#endif
"""

    def test_preprocessed(self):
        text = "#define CUDAAPI_NONE\n" + self.DRIVER_API
        p = prototypes(text, ["cuA", "cuA_v2", "cuA_v2_ptds", "cuB", "cuB_v2"], gu.CUDA)
        self.assertEqual(p["cuA"].c_declarator(), "CUresult cuA(int *p)")
        self.assertEqual(p["cuA_v2"].c_declarator(), "CUresult cuA_v2(int *p, unsigned n)")
        self.assertEqual(p["cuA_v2_ptds"].c_declarator(),
                         "CUresult cuA_v2_ptds(int *p, unsigned n)")
        self.assertEqual(p["cuB"].c_declarator(), "CUresult cuB(int x)")
        self.assertEqual(p["cuB_v2"].c_declarator(), "CUresult cuB_v2(long x)")
        self.assertTrue(all(x.c_visible and x.header == "cuda.h" for x in p.values()))
        self.assertIn("return unsupported(\"cuB\", &logged);", gu.stub(gu.CUDA, p["cuB"]))
        # An inline function's call declares nothing.
        self.assertFails(text, ["cuC"], "no toolkit header declares cuC", gu.CUDA)
        self.assertFails("#error broken\n", ["cuA"], "-E", gu.CUDA)


class Toolkit(unittest.TestCase):
    def test_exports_as_nm_sees_them(self):
        out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", LIB],
                             check=True, capture_output=True, text=True).stdout
        nm = {}
        for line in out.splitlines():
            kind, sym = line.split()[-2:]
            if kind == "T":
                name, _, version = sym.partition("@@")
                nm[name] = version
        self.assertEqual(gvs_elf.Elf(LIB).exported_functions(), nm)

    def test_every_stub_matches_its_declaration(self):
        lib = gvs_elf.Elf(LIB)
        exports = gu.read_exports(EXPORTS) if EXPORTS else lib.exported_functions()
        protos = gu.read_prototypes(API, INCLUDES, set(exports), CC)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "fe.h"), "w") as f:
                f.write(FE_H[API.name])
            src = os.path.join(tmp, "stubs.c")
            with open(src, "w") as f:
                f.write(gu.gen_stubs(API, protos, sorted(exports), lib.soname()))
            args = [CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                    "-I", tmp, "-I", os.path.join(HERE, "shim")]
            r = subprocess.run(args + ["-I" + d for d in INCLUDES] + [src],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr[:4000])


class Coverage(unittest.TestCase):
    SOURCE = """\
int gvs_client_call(void);
int gvs_client_get(void);
int fe_client(void) { return gvs_client_get() + gvs_client_call(); }
static int (*const table[])(void) = {gvs_client_call};
__attribute__((noinline)) static int helper(int i) { return table[i](); }
int cudaFwd(int i) { return helper(i); }
int cudaLocal(void) { return fe_client(); }
int cudaAlone(int x) { return x + 1; }
"""

    def objects(self, tmp, *flags):
        src, obj = os.path.join(tmp, "fe.c"), os.path.join(tmp, "fe.o")
        with open(src, "w") as f:
            f.write(self.SOURCE)
        subprocess.run([CC, "-c", "-O2", "-fPIC", "-o", obj, src] + list(flags), check=True)
        return gu.Objects([obj], gu.CUDART.setup)

    def test_classification(self):
        with tempfile.TemporaryDirectory() as tmp:
            objs = self.objects(tmp, "-ffunction-sections", "-fdata-sections")
        text = gu.gen_coverage(gu.CUDART, {"cudaFwd": "", "cudaLocal": "", "cudaAlone": "",
                                           "cudaMissing": ""}, objs, "libcudart.so.13")
        self.assertIn("forwards **1** to the backend, answers **2** locally, "
                      "and does not\nsupport **1** yet", text)
        self.assertIn("| `cudaFwd` | forwarded |", text)
        self.assertIn("| `cudaLocal` | answered locally |", text)
        self.assertIn("| `cudaMissing` | not supported |", text)

    def test_reasons(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r")
            with open(path, "w") as f:
                f.write("# comment\ncudaMiss*\tprefix reason\ncudaMissing\tlater\n")
            reasons = gu.read_reasons(path)
            objs = self.objects(tmp, "-ffunction-sections", "-fdata-sections")
            with open(path, "w") as f:
                f.write("cudaMissing no tab\n")
            with self.assertRaises(gu.GenError):
                gu.read_reasons(path)
        self.assertEqual(gu.reason_for(reasons, "cudaMissing"), "prefix reason")
        self.assertIsNone(gu.reason_for(reasons, "cudaFwd"))
        text = gu.gen_coverage(gu.CUDART, {"cudaFwd": "", "cudaMissing": ""}, objs,
                               "libcudart.so.13", reasons)
        self.assertIn("| `cudaMissing` | not supported | prefix reason |", text)
        self.assertIn("| `cudaFwd` | forwarded |  |", text)

    def test_needs_function_sections(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(gu.GenError) as cm:
                self.objects(tmp)
        self.assertIn("compile with -ffunction-sections", str(cm.exception))


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--api"] and len(args) > 1 and args[1] in gu.APIS:
        API, args = gu.APIS[args[1]], args[2:]
    if args[:1] == ["--exports"] and len(args) > 1:
        EXPORTS, args = args[1], args[2:]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CC, LIB, INCLUDES = args[0], args[1], args[2:]
    unittest.main(argv=sys.argv[:1])
