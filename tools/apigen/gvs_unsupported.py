#!/usr/bin/env python3
"""Stubs for the CUDA functions a frontend does not implement, and the
coverage table of every function the NVIDIA library it stands in for
exports: the runtime (libcudart.so.13) or the driver (libcuda.so.1).

    gvs_unsupported.py [--api cudart|cuda] [--cc CC] [--exports FILE]
                       --lib LIB --include-dir DIR [--include-dir DIR...]
                       --out-c FILE --out-coverage FILE [--reasons FILE]
                       OBJECT...

LIB is the toolkit's library (libcudart.so.13, or lib64/stubs/libcuda.so
for the driver): every function it exports must be exported by the
frontend, or, given --exports, every function that file names (one a
line, unversioned).  OBJECTs are the frontend's compiled sources (with
-ffunction-sections): whatever they define is implemented; every other
export gets a stub in --out-c with the prototype the toolkit headers give
it.  --out-coverage classifies each export as forwarded, answered locally
or not supported (tools/apigen/README.md), the last with its reason from
--reasons.  The driver's headers are read through CC's preprocessor.
Standard library only; output is deterministic.
"""

import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gvs_elf  # noqa: E402

# Where the runtime's exports are declared, in the order their
# declarations are preferred, and whether a C compiler sees them (the crt
# headers are for nvcc's C++ host code only).  The interop headers include
# the system's GL, EGL and VDPAU headers, which a build machine need not
# have: the stubs are compiled with tools/apigen/shim, which gives the few
# types the CUDA prototypes use.
RUNTIME_HEADERS = (
    ("cuda_runtime_api.h", True),
    ("cuda_profiler_api.h", True),
    ("cuda_gl_interop.h", True),
    ("cuda_egl_interop.h", True),
    ("cuda_vdpau_interop.h", True),
    ("crt/host_runtime.h", False),
    ("crt/device_functions.h", False),
)

# Runtime exports that no toolkit header declares (only CUPTI's callback
# ids name them).  Prototypes from the machine code of NVIDIA's
# libcudart.so.13: __cudaGetProcAddress reads no argument and returns 0;
# __cudaRegisterHostVar passes on four arguments and
# __cudaRegisterUnifiedTable five, the first a module handle, and neither
# returns a value.
RUNTIME_UNDECLARED = {
    "__cudaGetProcAddress": ("void *", "void"),
    "__cudaRegisterHostVar": ("void", "void **fatCubinHandle, const char *deviceName, "
                                      "char *hostVar, size_t size"),
    "__cudaRegisterUnifiedTable": ("void", "void **fatCubinHandle, void *arg1, void *arg2, "
                                           "void *arg3, void *arg4"),
}

# What a runtime stub returns, by return type, after recording
# cudaErrorNotSupported as the thread's last error (a void stub only
# records it).  Every exported function's return type must be here.
RUNTIME_FAILURE = {
    "cudaError_t": "cudaErrorNotSupported",
    "void": None,
    # A pointer: no handle, no table, no string.
    "*": "NULL",
    # __cudaPushCallConfiguration: non-zero makes the <<<>>> launch skip
    # the kernel, as when the configuration is refused.
    "unsigned": "1",
    # __cudaInitModule: the module was not initialized.
    "char": "0",
    # cudaCreateChannelDesc: a descriptor of no format.
    "struct cudaChannelFormatDesc":
        "(struct cudaChannelFormatDesc){0, 0, 0, 0, cudaChannelFormatKindNone}",
}

# Tokens of a declaration that are not part of its C type: storage,
# linkage and the toolkit's annotation macros (empty in a C build).
DECORATIONS = {"extern", '"C"', "CUDARTAPI", "__host__", "__device__",
               "__cudart_builtin__", "__CUDA_DEPRECATED"}
C_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double",
                "signed", "unsigned", "_Bool", "const", "volatile", "restrict",
                "struct", "enum", "union"}

# Coverage: a function is forwarded when its code can reach one of the
# request senders of the client library or of the remoting layer's
# frontend (other than through the frontend's connection set-up:
# Api.setup).
SENDERS = re.compile(r"^gvs_client_(call|post|send)|"
                     r"^gvs_remote_(run|post|send_locked|stage_locked|set_context_locked)$")


class Api:
    """What sets one NVIDIA library apart: where its exports are declared,
    how its stubs fail, and the words of its coverage table."""

    def __init__(self, name, title, result, not_supported, fail, base_header,
                 headers, failure, reasons, defines=None, prerequisites=None,
                 undeclared=None, setup=(), quiet=False):
        self.name = name                    # the plugin: plugins/NAME
        self.title = title                  # "CUDA runtime"
        self.result = result                # the API's error type
        self.not_supported = not_supported  # its "not supported" value
        self.fail = fail                    # what unsupported() returns
        self.base_header = base_header      # the header fe.h includes
        self.headers = headers              # ((header, C sees it), ...)
        self.failure = failure              # {return type: failure value}
        self.reasons = reasons              # the reasons file, in the tree
        # None: each header's own text is read, macros unexpanded.
        # Otherwise the macros defined when the headers are read through
        # the C preprocessor; fe.h defines the same ones.
        self.defines = defines
        # {header: the header it needs included first and does not include}
        self.prerequisites = prerequisites or {}
        self.undeclared = undeclared or {}  # {name: (return type, params)}
        self.setup = setup                  # functions every call goes through
        # Stubs fail without a word: the API's callers probe for optional
        # features, and "not supported" is an answer they expect.
        self.quiet = quiet


# The runtime's headers declare each export under its own name (the
# per-thread variants through renames, which read_prototypes follows),
# but hide parts from C: they are read as text.  A stub records its
# failure as the thread's last error.  fe_client is the connection's
# set-up, which asks the backend for its devices once per session.
CUDART = Api("cudart", "CUDA runtime", "cudaError_t", "cudaErrorNotSupported",
             "cudart_fe_ret(cudaErrorNotSupported)", "cuda_runtime_api.h",
             RUNTIME_HEADERS, RUNTIME_FAILURE, "plugins/cudart/unsupported.reasons",
             undeclared=RUNTIME_UNDECLARED, setup=("fe_client",))

# cuda.h declares three ABIs under one name through macros (cuMemAlloc is
# cuMemAlloc_v2, or cuMemAlloc_v2_ptds per thread; the legacy cuMemAlloc
# is declared only for the driver's own build): preprocessed with
# __CUDA_API_VERSION_INTERNAL, as NVIDIA builds the driver, the headers
# declare every export under its exported name.  The interop headers want
# the system's GL, EGL and VDPAU headers, which tools/apigen/shim stands
# in for, as for the runtime; cudaVDPAU.h includes none itself.  The
# driver has no last error: a stub only fails.
CUDA = Api("cuda", "CUDA driver", "CUresult", "CUDA_ERROR_NOT_SUPPORTED",
           "CUDA_ERROR_NOT_SUPPORTED", "cuda.h",
           (("cuda.h", True), ("cudaProfiler.h", True), ("cudaGL.h", True),
            ("cudaEGL.h", True), ("cudaVDPAU.h", True)),
           {"CUresult": "CUDA_ERROR_NOT_SUPPORTED"}, "plugins/cuda/unsupported.reasons",
           defines=("__CUDA_API_VERSION_INTERNAL",),
           prerequisites={"cudaVDPAU.h": "vdpau/vdpau.h"})

# NVML: nvml.h maps the names a program writes to the current versions
# (nvmlInit is nvmlInit_v2) unless NVML_NO_UNVERSIONED_FUNC_DEFS, which
# declares the older ones under their own names, as the library exports
# them.  Every export but nvmlErrorString (implemented) returns
# nvmlReturn_t.  The library exports names no header of CUDA 13.0
# declares: the older names of two functions, its private export table,
# and three functions of later headers, whose prototypes are these.
NVML_UNDECLARED = {
    "nvmlGetBlacklistDeviceCount": ("nvmlReturn_t", "unsigned int *deviceCount"),
    "nvmlGetBlacklistDeviceInfoByIndex":
        ("nvmlReturn_t", "unsigned int index, nvmlExcludedDeviceInfo_t *info"),
    "nvmlInternalGetExportTable":
        ("nvmlReturn_t", "const void **ppExportTable, const void *pExportTableId"),
    "nvmlDeviceGetRemappedRows_v2": ("nvmlReturn_t", "nvmlDevice_t device, void *info"),
    "nvmlDeviceGetUnrepairableMemoryFlag_v1":
        ("nvmlReturn_t", "nvmlDevice_t device, void *unrepairableMemoryStatus"),
    "nvmlDeviceReadPRMCounters_v1": ("nvmlReturn_t", "nvmlDevice_t device, void *counterList"),
}
NVML = Api("nvml", "NVML", "nvmlReturn_t", "NVML_ERROR_NOT_SUPPORTED",
           "NVML_ERROR_NOT_SUPPORTED", "nvml.h", (("nvml.h", True),),
           {"nvmlReturn_t": "NVML_ERROR_NOT_SUPPORTED", "*": "NULL"},
           "plugins/nvml/unsupported.reasons",
           defines=("NVML_NO_UNVERSIONED_FUNC_DEFS",), undeclared=NVML_UNDECLARED,
           quiet=True)

APIS = {api.name: api for api in (CUDART, CUDA, NVML)}

TOKEN = re.compile(r"""\s*(?:("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')"""
                   r"""|([A-Za-z_]\w*)|(\.?\d[\w.]*)|(\.\.\.|[^\s\w]))""")
COMMENT = re.compile(r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|/\*.*?\*/|//[^\n]*""",
                     re.S)
PER_THREAD = re.compile(r"#\s*define\s+(\w+)\s+__CUDART_API_(PTDS|PTSZ)\(\s*(\w+)\s*\)\s*$")


class GenError(Exception):
    pass


class Prototype:
    def __init__(self, name, ret, params, header, c_visible):
        self.name = name
        self.ret = ret          # C type, normalized spacing
        self.params = params    # [(tokens of the type, name or None)]
        self.header = header
        self.c_visible = c_visible

    def signature(self):
        """The types only: declarations of one function must agree on it."""
        return (self.ret, tuple(" ".join(t) for t, _ in self.params))

    def renamed(self, name):
        """The prototype of a per-thread default stream variant, which C
        code sees only under its base name."""
        return Prototype(name, self.ret, self.params, self.header, False)

    def c_params(self):
        if not self.params:
            return "void"
        out = []
        for i, (toks, name) in enumerate(self.params):
            if toks == ["..."]:
                out.append("...")
                continue
            out.append(render(insert_name(toks, name or "arg%d" % i)))
        return ", ".join(out)

    def c_declarator(self):
        sep = "" if self.ret.endswith("*") else " "
        return "%s%s%s(%s)" % (self.ret, sep, self.name, self.c_params())


def render(toks):
    s = " ".join(toks)
    s = re.sub(r"\* (?=[\w*])", "*", s)
    s = re.sub(r"(\() | (?=[)\[\],])", r"\1", s)
    return s.replace(") (", ")(")


def tokenize(text, path):
    toks, pos = [], 0
    while True:
        m = TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        toks.append(m.group(m.lastindex))
        pos = m.end()
    if text[pos:].strip():
        raise GenError("%s: cannot read %r" % (path, text[pos:pos + 40]))
    return toks


def header_tokens(path):
    """The tokens outside preprocessor directives (each directive ends a
    statement), and the per-thread default stream renames {renamed: base}."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = COMMENT.sub(lambda m: m.group(1) or " " + "\n" * m.group(0).count("\n"), text)
    text = text.replace("\\\n", " ")
    toks, renames = [], {}
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            m = PER_THREAD.match(line.strip())
            if m is not None and m.group(1) == m.group(3):
                renames["%s_%s" % (m.group(1), m.group(2).lower())] = m.group(1)
            toks.append(";")
        else:
            toks.extend(tokenize(line, path))
    return toks, renames


def split_params(toks):
    """Top-level comma-separated parameters, defaults (C++ `= v`, the
    toolkit's __dv(v)) removed."""
    params, cur, depth = [], [], 0
    for t in toks + [","]:
        if t == "," and depth == 0:
            params.append(cur)
            cur = []
            continue
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(t, 0)
        cur.append(t)
    out = []
    for p in params:
        if "__dv" in p:
            p = p[:p.index("__dv")]
        if "=" in p:
            p = p[:p.index("=")]
        out.append(p)
    return [] if out == [["void"]] or out == [[]] else out


def param_name(toks):
    """Splits one parameter into (type tokens, name or None)."""
    if "(" in toks:  # function pointer: RET (*NAME)(ARGS)
        i = toks.index("(")
        if toks[i + 1] == "*" and re.match(r"^[A-Za-z_]\w*$", toks[i + 2]):
            return toks[:i + 2] + toks[i + 3:], toks[i + 2]
        return toks, None
    end = toks.index("[") if "[" in toks else len(toks)
    last = toks[end - 1]
    if (end > 1 and re.match(r"^[A-Za-z_]\w*$", last) and last not in C_TYPE_WORDS
            and toks[end - 2] not in ("struct", "enum", "union")):
        return toks[:end - 1] + toks[end:], last
    return toks, None


def insert_name(toks, name):
    if "(" in toks:
        i = toks.index("(")
        return toks[:i + 2] + [name] + toks[i + 2:]
    end = toks.index("[") if "[" in toks else len(toks)
    return toks[:end] + [name] + toks[end:]


def find_declarations(toks, wanted, accept):
    """[(index, name, return type tokens, parameter tokens)] of every
    declaration of a wanted name that accept(prefix, braces) takes: the
    statement's tokens before the name, and the depth of braces around."""
    out, start, braces = [], 0, 0
    for i, t in enumerate(toks):
        if t in (";", "{", "}"):
            braces += {"{": 1, "}": -1}.get(t, 0)
            start = i + 1
            continue
        if t not in wanted or i + 1 >= len(toks) or toks[i + 1] != "(":
            continue
        prefix = toks[start:i]
        if not accept(prefix, braces):
            continue  # a call in an inline function, a macro's use
        depth, j = 0, i + 1
        for j in range(i + 1, len(toks)):
            depth += {"(": 1, ")": -1}.get(toks[j], 0)
            if depth == 0:
                break
        if j + 1 < len(toks) and toks[j + 1] == ";":
            out.append((i, t, [x for x in prefix if x not in DECORATIONS], toks[i + 2:j]))
    return out


def extern_declaration(prefix, _braces):
    """In a header's raw text, where both branches of every #if are seen
    and C++ inline code too, only an `extern` statement declares."""
    return bool(prefix) and prefix[0] == "extern"


def file_scope_declaration(prefix, braces):
    """In preprocessed C, a statement at file scope made of type words
    declares (a typedef of a function pointer names no function)."""
    return (braces == 0 and bool(prefix) and prefix[0] != "typedef"
            and all(t == "*" or re.match(r"^[A-Za-z_]\w*$", t) for t in prefix))


def find_header(header, include_dirs):
    path = next((os.path.join(d, header) for d in include_dirs
                 if os.path.isfile(os.path.join(d, header))), None)
    if path is None:
        raise GenError("%s not found in %s" % (header, " ".join(include_dirs)))
    return path


def text_declarations(api, include_dirs, wanted):
    """The declarations of wanted names in each header's own text, as
    [(path, header, c_visible, name, return type tokens, parameter
    tokens)], and the per-thread renames {renamed: base}."""
    decls, renames = [], {}
    for header, c_visible in api.headers:
        path = find_header(header, include_dirs)
        toks, ren = header_tokens(path)
        renames.update(ren)
        decls += [(path, header, c_visible, name, ret, params) for _, name, ret, params
                  in find_declarations(toks, wanted, extern_declaration)]
    return decls, renames


SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")
LINE_MARKER = re.compile(r'^#\s*\d+\s+"((?:\\.|[^"\\])*)"')


def preprocessed_declarations(api, include_dirs, wanted, cc):
    """The declarations of wanted names in the headers as CC's
    preprocessor gives them with api.defines, in the same form as
    text_declarations, each with the header its line markers name."""
    if cc is None:
        raise GenError("the %s headers are read through a C preprocessor: give --cc"
                       % api.name)
    ours = {os.path.realpath(find_header(h, include_dirs)): (h, v) for h, v in api.headers}
    src = "".join(include_lines(api, [h for h, _ in api.headers]))
    cmd = ([cc, "-E", "-x", "c"] + ["-D" + d for d in api.defines]
           + ["-I" + d for d in include_dirs + [SHIM]] + ["-"])
    r = subprocess.run(cmd, input=src, capture_output=True, text=True)
    if r.returncode != 0:
        raise GenError("%s failed:\n%s" % (" ".join(cmd), r.stderr))
    toks, origin, where = [], [], None
    for line in r.stdout.split("\n"):
        if line.startswith("#"):
            m = LINE_MARKER.match(line)
            if m is not None:
                where = m.group(1)
                continue  # a marker may fall inside a declaration
            line = ";"  # a #pragma ends a statement
        for t in tokenize(line, "the preprocessed headers"):
            toks.append(t)
            origin.append(where)
    decls = []
    for i, name, ret, params in find_declarations(toks, wanted, file_scope_declaration):
        path = origin[i]
        if os.path.realpath(path) not in ours:
            raise GenError("%s declares %s: not a header of the %s"
                           % (path, name, api.title))
        header, c_visible = ours[os.path.realpath(path)]
        decls.append((path, header, c_visible, name, ret, params))
    return decls, {}


def read_prototypes(api, include_dirs, wanted, cc=None):
    """{name: Prototype} for each wanted name, from the first declaration
    in api.headers order; every other declaration must have the same
    types."""
    if api.defines is None:
        decls, renames = text_declarations(api, include_dirs, wanted)
    else:
        decls, renames = preprocessed_declarations(api, include_dirs, wanted, cc)
    protos = {}
    for path, header, c_visible, name, ret, params in decls:
        for t in ret:
            if t.startswith("__") or re.match(r"^[A-Z][A-Z0-9_]+$", t):
                raise GenError("%s: unknown annotation %s in the declaration of %s"
                               % (path, t, name))
        p = Prototype(name, render(ret), [param_name(x) for x in split_params(params)],
                      header, c_visible)
        have = protos.get(name)
        if have is None:
            protos[name] = p
        elif have.signature() != p.signature():
            raise GenError("%s: %s is declared as %s here, %s in %s"
                           % (path, name, p.c_declarator(), have.c_declarator(),
                              have.header))
    for name in sorted(wanted - set(protos)):
        if name in api.undeclared:
            ret, params = api.undeclared[name]
            protos[name] = Prototype(name, ret, [param_name(tokenize(p, name)) for p in
                                                 ([] if params == "void" else params.split(","))],
                                     None, False)
        elif name in renames and renames[name] in protos:
            protos[name] = protos[renames[name]].renamed(name)
        else:
            raise GenError("no toolkit header declares %s" % name)
    for p in protos.values():
        failure_value(api, p)
    return protos


def failure_value(api, p):
    key = "*" if p.ret.endswith("*") else p.ret
    if key not in api.failure:
        raise GenError("%s returns %s: choose its failure value in the %s Api's failure"
                       % (p.name, p.ret, api.name))
    return api.failure[key]


def stub(api, p):
    value = failure_value(api, p)
    body = ["{\n", "    static atomic_flag logged = ATOMIC_FLAG_INIT;\n"]
    if p.ret == api.result:
        body.append('    return unsupported("%s", &logged);\n' % p.name)
    else:
        body.append('    (void)unsupported("%s", &logged);\n' % p.name)
        if value is not None:
            body.append("    return %s;\n" % value)
    body.append("}\n")
    return "%s\n%s" % (p.c_declarator(), "".join(body))


def include_lines(api, headers):
    out = []
    for h in headers:
        if h in api.prerequisites:
            out.append("#include <%s>\n" % api.prerequisites[h])
        out.append("#include <%s>\n" % h)
    return out


def gen_stubs(api, protos, missing, soname):
    out = ["/* Generated by tools/apigen/gvs_unsupported.py from %s and the\n"
           " * toolkit headers: the functions it exports that the frontend does not\n"
           " * implement.  Do not edit. */\n" % soname,
           '#include "fe.h"\n\n#include <stdatomic.h>\n#include <stdio.h>\n']
    # fe.h includes the API's main header.
    headers = sorted({protos[n].header for n in missing if protos[n].c_visible}
                     - {api.base_header})
    if headers:
        out.append("\n#pragma GCC visibility push(default)\n")
        out.extend(include_lines(api, headers))
        out.append("#pragma GCC visibility pop\n")
    out.append("""
/* A stub ignores its arguments. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* %s */
static %s unsupported(const char *name, atomic_flag *logged)
{
%s    return %s;
}

#pragma GCC visibility push(default)
""" % ("Fails like any call, without a word (the API's callers probe)."
       if api.quiet else "Says once per function that it is missing; fails like any call.",
       api.result,
       "    (void)name;\n    (void)logged;\n" if api.quiet else
       "    if (!atomic_flag_test_and_set(logged))\n"
       "        fprintf(stderr, \"gvs: %s is not supported yet\\n\", name);\n",
       api.fail))
    hidden = [n for n in missing if not protos[n].c_visible]
    if hidden:
        out.append("\n/* Declared for C by no toolkit header. */\n")
        out.extend("%s;\n" % protos[n].c_declarator() for n in hidden)
    for n in missing:
        out.append("\n" + stub(api, protos[n]))
    out.append("\n#pragma GCC visibility pop\n")
    return "".join(out)


class Objects:
    """The frontend's compiled sources: the functions they define, and
    which sections refer to which (one function per section)."""

    def __init__(self, paths, setup):
        self.functions = {}  # global function name -> node
        self.edges = {}      # node (object index, section) -> nodes and undefined names
        per_object, globals_ = [], {}
        for k, path in enumerate(paths):
            elf = gvs_elf.Elf(path)
            syms = elf.symtab()
            per_object.append((elf, syms))
            by_section = {}
            for s in syms:
                if not s.defined:
                    continue
                if s.is_function:  # aliases (x.localalias) share an address
                    by_section.setdefault(s.shndx, {}).setdefault(s.value, s.name)
                if s.bind != gvs_elf.STB_LOCAL:
                    globals_[s.name] = (k, s.shndx)
                    if s.is_function:
                        self.functions[s.name] = (k, s.shndx)
            for names in by_section.values():
                if len(names) > 1:
                    raise GenError("%s: %s share a section: compile with -ffunction-sections"
                                   % (path, ", ".join(sorted(names.values()))))
        self.barrier = set()
        for b in setup:
            if b not in self.functions:
                raise GenError("the frontend defines no %s: update its Api's setup" % b)
            self.barrier.add(self.functions[b])
        for k, (elf, syms) in enumerate(per_object):
            for section, symidx in elf.relocations():
                s = syms[symidx]
                dest = (k, s.shndx) if s.defined else globals_.get(s.name, s.name)
                self.edges.setdefault((k, section), set()).add(dest)

    def forwards(self, name):
        todo, seen = [self.functions[name]], set()
        while todo:
            node = todo.pop()
            if node in seen or node in self.barrier:
                continue
            seen.add(node)
            for dest in self.edges.get(node, ()):
                if isinstance(dest, str):
                    if SENDERS.match(dest):
                        return True
                else:
                    todo.append(dest)
        return False


def read_reasons(path):
    """The reasons file: [(name or prefix ending in '*', reason, line)]."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, sep, reason = line.partition("\t")
            if not sep or not name or not reason.strip():
                raise GenError("%s:%d: expected NAME<TAB>reason" % (path, n))
            entries.append((name, reason.strip(), n))
    return entries


def entry_matches(entry, name):
    pattern = entry[0]
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def reason_for(entries, name):
    """The reason of the first entry naming name, or None."""
    for e in entries:
        if entry_matches(e, name):
            return e[1]
    return None


def gen_coverage(api, exports, objs, soname, reasons=()):
    status = {}
    for name in exports:
        if name not in objs.functions:
            status[name] = "not supported"
        elif objs.forwards(name):
            status[name] = "forwarded"
        else:
            status[name] = "answered locally"
    count = {s: sum(1 for v in status.values() if v == s)
             for s in ("forwarded", "answered locally", "not supported")}
    out = ["# %s coverage\n\n" % api.title,
           "Generated from the build by `tools/apigen/gvs_unsupported.py`; do not\n"
           "edit.  Refresh it after a build with\n"
           "`cmake --build build --target %s_coverage`.\n\n" % api.name,
           "Of the %d functions NVIDIA's `%s` exports, gvs's frontend\n" % (len(status), soname),
           "forwards **%d** to the backend, answers **%d** locally, and does not\n"
           "support **%d** yet (they return `%s`%s).\n\n"
           % (count["forwarded"], count["answered locally"], count["not supported"],
              api.not_supported, "" if api.quiet else " and say so once\non stderr"),
           "* forwarded: its code can send a request to the backend (beyond the\n"
           "  session's set-up, which every call makes once).\n"
           "* answered locally: implemented in the frontend alone.\n"
           "* not supported: a generated stub, with the reason gvs leaves it so\n"
           "  (%s).\n\n" % api.reasons,
           "| function | status | reason |\n|---|---|---|\n"]
    for name in sorted(status, key=lambda n: (n.lstrip("_").lower(), n)):
        why = ""
        if status[name] == "not supported":
            why = reason_for(reasons, name) or ""
        out.append("| `%s` | %s | %s |\n" % (name, status[name], why))
    return "".join(out)


def read_exports(path):
    """{name: ""} of an exports list: a name a line, `#` comments."""
    with open(path, encoding="utf-8") as f:
        names = [line.strip() for line in f]
    return {n: "" for n in names if n and not n.startswith("#")}


def write_file(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--api", choices=sorted(APIS), default=CUDART.name,
                    help="the library the frontend stands in for")
    ap.add_argument("--cc", help="the C compiler, to preprocess the driver's headers")
    lib_or_soname = ap.add_mutually_exclusive_group(required=True)
    lib_or_soname.add_argument("--lib",
                               help="the toolkit's library (libcudart.so.13, stubs/libcuda.so)")
    lib_or_soname.add_argument("--soname",
                               help="the library's soname, where --exports lists its functions")
    ap.add_argument("--exports", help="the functions to export, if not LIB's")
    ap.add_argument("--include-dir", action="append", required=True,
                    help="the toolkit's include directory")
    ap.add_argument("--out-c", required=True, help="the stubs to write")
    ap.add_argument("--out-coverage", required=True, help="the coverage table to write")
    ap.add_argument("--reasons", help="why the unsupported functions are so")
    ap.add_argument("objects", nargs="+", help="the frontend's object files")
    ns = ap.parse_args(argv)
    api = APIS[ns.api]
    try:
        if ns.lib is None and ns.exports is None:
            raise GenError("--soname needs --exports")
        lib = gvs_elf.Elf(ns.lib) if ns.lib is not None else None
        soname = lib.soname() if lib is not None else ns.soname
        exports = read_exports(ns.exports) if ns.exports else lib.exported_functions()
        objs = Objects(ns.objects, api.setup)
        protos = read_prototypes(api, ns.include_dir, set(exports), ns.cc)
        missing = sorted(set(exports) - set(objs.functions))
        write_file(ns.out_c, gen_stubs(api, protos, missing, soname))
        reasons = read_reasons(ns.reasons) if ns.reasons else []
        write_file(ns.out_coverage, gen_coverage(api, exports, objs, soname, reasons))
    except (GenError, gvs_elf.ElfError, OSError) as e:
        print("gvs_unsupported: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
