#!/usr/bin/env python3
"""gvs API generator: one description of a plugin's operations in, the
C code both halves need out.  Syntax and the generated interface are in
tools/apigen/README.md.  Standard library only; output is deterministic.
"""

import argparse
import os
import re
import sys

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3

# Scalar argument types: C type, apigen_rt codec suffix, wire integer type.
SCALARS = {
    "int": ("int", "i32", "int32_t"),
    "uint": ("unsigned int", "u32", "uint32_t"),
    "i64": ("long long", "i64", "int64_t"),
    "u64": ("unsigned long long", "u64", "uint64_t"),
    "size": ("size_t", "u64", "uint64_t"),
    "devptr": ("void *", "u64", "uint64_t"),
    "float": ("float", "f32", "float"),
}
FE_KINDS = ("auto", "rpc", "manual")
BE_KINDS = ("auto", "manual")
# ptsz and ptds also generate NAME_ptsz / NAME_ptds, the entry point that
# nvcc --default-stream per-thread compiles NAME to.
TWINS = ("ptsz", "ptds")
OP_FLAGS = ("device", "async", "blocking", "inline", "batch", "notify") + TWINS
# Op attributes that are flags of the backend's op table (include/gvs/plugin.h).
OP_FLAG_BITS = {"async": "GVS_OP_ASYNC_OK", "blocking": "GVS_OP_BLOCKING",
                "inline": "GVS_OP_INLINE", "batch": "GVS_OP_BATCH"}


class DescError(Exception):
    def __init__(self, path, line, msg):
        super().__init__("%s:%d: %s" % (path, line, msg))


class Handle:
    """A `handle` directive: a kind of object handle that travels as a
    u64 id and that the backend resolves with a function of the plugin's."""

    def __init__(self, name, ctype, be, fe, takes_call):
        self.name, self.ctype, self.be, self.fe = name, ctype, be, fe
        self.takes_call = takes_call  # resolver takes the call, after enter

    def fe_wire(self, value, per_thread):
        if self.fe is not None:
            return "%s(%s, %s)" % (self.fe, value, per_thread)
        return "(uint64_t)(uintptr_t)%s" % value

    def be_resolve(self, wire, out):
        if self.takes_call:
            return "%s(call, %s, &%s)" % (self.be, wire, out)
        return "%s(%s, &%s)" % (self.be, wire, out)


class Arg:
    def __init__(self, direction, typ, name, handle=None, optional=False):
        self.direction = direction  # "in" or "out"
        self.typ = typ              # key of SCALARS, "enum:T", "struct:T" or a handle
        self.name = name
        self.handle = handle        # the Handle of a handle argument
        # An out the caller may pass as NULL (`out?`): frontend only, the
        # wire carries it all the same.
        self.optional = optional

    @property
    def kind(self):
        if self.handle is not None:
            return "handle"
        return self.typ.split(":", 1)[0]

    @property
    def tname(self):
        return self.typ.split(":", 1)[1]

    def c_type(self):
        if self.handle is not None:
            return self.handle.ctype
        if self.kind == "enum":
            return "enum %s" % self.tname
        if self.kind == "struct":
            return "struct %s" % self.tname
        return SCALARS[self.typ][0]

    def c_param(self):
        t = self.c_type()
        if self.direction == "out":
            t += " *" if not t.endswith("*") else "*"
        sep = "" if t.endswith("*") else " "
        return "%s%s%s" % (t, sep, self.name)

    def codec(self):
        if self.kind == "enum":
            return "i32", "int32_t"
        if self.handle is not None:
            return "u64", "uint64_t"
        return SCALARS[self.typ][1], SCALARS[self.typ][2]


class Op:
    def __init__(self, num, name, fe, be, flags, args, line, post_if=None):
        self.num, self.name, self.fe, self.be = num, name, fe, be
        self.flags, self.args, self.line = flags, args, line
        # The frontend's predicate that decides, call by call, whether an
        # async op is posted; without one it always is.
        self.post_if = post_if

    @property
    def ins(self):
        return [a for a in self.args if a.direction == "in"]

    @property
    def outs(self):
        return [a for a in self.args if a.direction == "out"]

    @property
    def twin(self):
        """The suffix of the per-thread default-stream twin, or None."""
        return next((t for t in TWINS if t in self.flags), None)

    def per_thread(self):
        """Whether a handle argument's wire value depends on per_thread."""
        return any(a.handle is not None and a.handle.fe is not None for a in self.args)

    def canonical(self):
        args = ",".join("%s %s" % (a.direction, a.typ) for a in self.args)
        return ("op %d %s fe=%s be=%s %s : %s" % (
            self.num, self.name, self.fe, self.be,
            ",".join(sorted(self.flags)) or "-", args)).rstrip()


class Desc:
    def __init__(self):
        self.plugin = None
        self.plugin_id = None
        self.result = None
        self.success = None
        self.invalid = None
        self.includes = []
        self.fe_includes = []
        self.be_includes = []
        self.be_call = None
        self.handles = {}
        self.ops = []

    def canonical(self):
        lines = ["plugin %s %d" % (self.plugin, self.plugin_id)]
        lines += [op.canonical() for op in sorted(self.ops, key=lambda o: o.num)]
        return "\n".join(lines) + "\n"

    def table_hash(self):
        h = FNV_OFFSET
        for byte in self.canonical().encode("utf-8"):
            h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
        return h


def parse_args(path, lineno, text, handles):
    args = []
    if not text.strip():
        return args
    for part in text.split(","):
        words = part.split()
        if len(words) != 3:
            raise DescError(path, lineno, "argument must be 'in|out TYPE NAME': %r" % part.strip())
        direction, typ, name = words
        optional = direction == "out?"
        if optional:
            direction = "out"
        if direction not in ("in", "out"):
            raise DescError(path, lineno, "argument direction must be in, out or out?, not %r" % direction)
        if not IDENT.match(name):
            raise DescError(path, lineno, "bad argument name %r" % name)
        if any(a.name == name for a in args):
            raise DescError(path, lineno, "duplicate argument %r" % name)
        if typ in handles:
            if direction != "in":
                raise DescError(path, lineno, "handle arguments can only be in")
            args.append(Arg(direction, typ, name, handles[typ]))
            continue
        if ":" in typ:
            kind, tname = typ.split(":", 1)
            if kind not in ("enum", "struct") or not IDENT.match(tname):
                raise DescError(path, lineno, "unknown type %r" % typ)
            if kind == "struct" and direction != "out":
                raise DescError(path, lineno, "struct arguments can only be out")
        elif typ not in SCALARS:
            raise DescError(path, lineno, "unknown type %r" % typ)
        args.append(Arg(direction, typ, name, optional=optional))
    return args


def parse_op(path, lineno, rest, handles):
    head, _, argtext = rest.partition(":")
    words = head.split()
    if len(words) < 2:
        raise DescError(path, lineno, "op needs a number and a name")
    try:
        num = int(words[0], 10)
    except ValueError:
        raise DescError(path, lineno, "op number %r is not a decimal integer" % words[0])
    if not 1 <= num <= 65535:
        raise DescError(path, lineno, "op number %d out of range 1..65535" % num)
    name = words[1]
    if not IDENT.match(name):
        raise DescError(path, lineno, "bad op name %r" % name)
    fe, be, flags, post_if = "auto", "auto", set(), None
    for w in words[2:]:
        if w.startswith("post_if="):
            post_if = w[len("post_if="):]
            if not IDENT.match(post_if):
                raise DescError(path, lineno, "bad post_if function %r" % post_if)
        elif w == "manual":
            fe, be = "manual", "manual"
        elif w.startswith("fe="):
            fe = w[3:]
            if fe not in FE_KINDS:
                raise DescError(path, lineno, "fe= must be one of %s" % "|".join(FE_KINDS))
        elif w.startswith("be="):
            be = w[3:]
            if be not in BE_KINDS:
                raise DescError(path, lineno, "be= must be one of %s" % "|".join(BE_KINDS))
        elif w in OP_FLAGS:
            flags.add(w)
        else:
            raise DescError(path, lineno, "unknown op attribute %r" % w)
    if "notify" in flags:
        # A frame the server sends unasked: nothing to generate, and no
        # handler, so a client that sends this number is refused.
        if words[2:] != ["notify"] or argtext.strip():
            raise DescError(path, lineno, "a notify op takes no other attribute and no argument")
        fe, be = "manual", "manual"
    args = parse_args(path, lineno, argtext, handles)
    if fe == "manual" and be == "manual" and args:
        raise DescError(path, lineno, "a manual op describes its body in prose, not arguments")
    if "async" in flags and fe != "manual" and any(a.direction == "out" for a in args):
        raise DescError(path, lineno, "an async op cannot have out arguments")
    if "batch" in flags and ("async" not in flags or "blocking" in flags):
        raise DescError(path, lineno, "a batch op is async and not blocking")
    if post_if is not None and ("async" not in flags or fe not in ("auto", "rpc")):
        raise DescError(path, lineno, "post_if needs an async op with fe=auto or fe=rpc")
    op = Op(num, name, fe, be, flags, args, lineno, post_if)
    if be == "auto" and "device" not in flags and any(
            a.handle is not None and a.handle.takes_call for a in args):
        raise DescError(path, lineno, "a handle resolved with the call needs a device op")
    if op.twin is not None:
        if len(flags & set(TWINS)) > 1:
            raise DescError(path, lineno, "ptsz and ptds exclude each other")
        if fe != "auto" or not op.per_thread():
            raise DescError(path, lineno, "%s needs fe=auto and a handle argument with fe=" % op.twin)
    return op


def parse_handle(d, path, lineno, rest):
    words = rest.split()
    opts = dict(w.split("=", 1) for w in words[2:] if "=" in w)
    flags = [w for w in words[2:] if "=" not in w]
    if (len(words) < 3 or not IDENT.match(words[0]) or not IDENT.match(words[1])
            or not set(opts) <= {"be", "fe"} or "be" not in opts
            or len(opts) + len(flags) != len(words) - 2
            or not all(IDENT.match(v) for v in opts.values())
            or flags not in ([], ["call"])):
        raise DescError(path, lineno, "expected 'handle NAME CTYPE be=FN [fe=FN] [call]'")
    name = words[0]
    if name in SCALARS or name in ("enum", "struct") or name in d.handles:
        raise DescError(path, lineno, "handle type %r already defined" % name)
    d.handles[name] = Handle(name, words[1], opts["be"], opts.get("fe"), flags == ["call"])


def parse(path, text):
    d = Desc()
    parse_into(d, path, text, set())
    if d.plugin is None:
        raise DescError(path, 1, "missing 'plugin NAME ID'")
    if not d.ops:
        raise DescError(path, 1, "no op described")
    return d


def parse_part(d, path, lineno, rest, seen):
    """A `part "FILE"` directive: FILE (relative to the including file)
    describes more ops of the same plugin."""
    m = re.match(r'^"([^"\s]+\.api)"$', rest)
    if not m:
        raise DescError(path, lineno, 'expected part "FILE.api"')
    sub = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
    if sub in seen:
        raise DescError(path, lineno, "%s is included twice" % m.group(1))
    seen.add(sub)
    try:
        with open(sub, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise DescError(path, lineno, "cannot read %s: %s" % (m.group(1), e.strerror))
    parse_into(d, sub, text, seen)


def parse_into(d, path, text, seen):
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        rest = rest.strip()
        if key == "plugin":
            words = rest.split()
            if d.plugin is not None:
                raise DescError(path, lineno, "plugin given twice")
            if len(words) != 2 or not IDENT.match(words[0]) or not words[1].isdigit():
                raise DescError(path, lineno, "expected 'plugin NAME ID'")
            d.plugin, d.plugin_id = words[0], int(words[1])
            if not 1 <= d.plugin_id <= 65535:
                raise DescError(path, lineno, "plugin id out of range 1..65535")
        elif key == "result":
            words = rest.split()
            opts = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if (len(words) != 3 or not IDENT.match(words[0])
                    or set(opts) != {"success", "invalid"}
                    or not all(IDENT.match(v) for v in opts.values())):
                raise DescError(path, lineno, "expected 'result TYPE success=NAME invalid=NAME'")
            d.result, d.success, d.invalid = words[0], opts["success"], opts["invalid"]
        elif key in ("include", "fe-include", "be-include"):
            if not re.match(r'^(<[^<>"\s]+>|"[^<>"\s]+")$', rest):
                raise DescError(path, lineno, "expected <header> or \"header\"")
            {"include": d.includes, "fe-include": d.fe_includes,
             "be-include": d.be_includes}[key].append(rest)
        elif key == "be-call":
            if not IDENT.match(rest):
                raise DescError(path, lineno, "expected 'be-call MACRO'")
            d.be_call = rest
        elif key == "op":
            if d.plugin is None or d.result is None:
                raise DescError(path, lineno, "'plugin' and 'result' must come before the first op")
            op = parse_op(path, lineno, rest, d.handles)
            for other in d.ops:
                if other.num == op.num:
                    raise DescError(path, lineno, "op number %d already used on line %d" % (op.num, other.line))
                if other.name == op.name:
                    raise DescError(path, lineno, "op name %s already used on line %d" % (op.name, other.line))
            d.ops.append(op)
        elif key == "handle":
            parse_handle(d, path, lineno, rest)
        elif key == "part":
            if d.plugin is None or d.result is None:
                raise DescError(path, lineno, "'plugin' and 'result' must come before the first part")
            parse_part(d, path, lineno, rest, seen)
        else:
            raise DescError(path, lineno, "unknown directive %r" % key)


def banner(src):
    return ("/* Generated by tools/apigen/gvs_apigen.py from %s.  Do not edit. */\n"
            % os.path.basename(src))


def op_enum(d, op):
    return "%s_OP_%s" % (d.plugin.upper(), op.name)


def gen_ops_h(d, src):
    guard = "GVS_%s_OPS_H" % d.plugin.upper()
    p = d.plugin.upper()
    out = [banner(src), "#ifndef %s\n#define %s\n\n" % (guard, guard)]
    out.append("#define %s_PLUGIN_ID %du\n" % (p, d.plugin_id))
    out.append("#define %s_PLUGIN_NAME \"%s\"\n" % (p, d.plugin))
    out.append("/* FNV-1a 64 of the canonical description:\n")
    for line in d.canonical().splitlines():
        out.append(" *   %s\n" % line)
    out.append(" */\n#define %s_TABLE_HASH 0x%016xull\n\n" % (p, d.table_hash()))
    out.append("enum %s_op {\n" % d.plugin)
    for op in sorted(d.ops, key=lambda o: o.num):
        out.append("    %s = %d,\n" % (op_enum(d, op), op.num))
    out.append("};\n\n#endif\n")
    return "".join(out)


def prototype(d, op, name, per_thread=False):
    params = [a.c_param() for a in op.args]
    if per_thread:
        params.append("int per_thread")
    return "%s %s(%s)" % (d.result, name, ", ".join(params) or "void")


def rpc_name(d, op):
    return "%s_rpc_%s" % (d.plugin, op.name)


def handler_name(d, op):
    return "%s_be_%s" % (d.plugin, op.name.lower())


def includes(d, own, generated):
    # The plugin's own header comes first: it may set visibility or feature
    # macros that must precede the library headers.
    lines = ["#include %s\n" % i for i in own]
    lines += ["#include %s\n" % i for i in ["<stdint.h>", "<string.h>"] + d.includes]
    lines += ['#include "apigen_rt.h"\n']
    lines += ["#include %s\n" % i for i in generated]
    return "".join(lines)


def gen_fe_h(d, src):
    guard = "GVS_%s_FE_GEN_H" % d.plugin.upper()
    out = [banner(src), "#ifndef %s\n#define %s\n\n" % (guard, guard)]
    out.append("".join("#include %s\n" % i for i in d.includes) + "\n")
    out.append("/* Round trips behind hand-written public functions; no last-error\n"
               " * bookkeeping. */\n")
    for op in d.ops:
        if op.fe == "rpc":
            out.append("%s;\n" % prototype(d, op, rpc_name(d, op), op.per_thread()))
    preds = [op for op in d.ops if op.post_if is not None]
    if preds:
        out.append("\n/* Hand-written: nonzero when the call, its arguments as given, may\n"
                   " * be posted without waiting for its result. */\n")
    for op in preds:
        params = [a.c_param() for a in op.args] + ["int per_thread"]
        out.append("int %s(%s);\n" % (op.post_if, ", ".join(params)))
    out.append("\n#endif\n")
    return "".join(out)


def fe_stub(d, op):
    pub = op.fe == "auto"
    ret = ("%s_fe_ret(%%s)" % d.plugin) if pub else "%s"
    flags = "APIGEN_DEVICE" if "device" in op.flags else "0"
    # A stub whose handles depend on per_thread takes it as an argument:
    # the rpc function from its caller, a public function with a twin from
    # its two entry points (fe_twins); any other one is never per-thread.
    if op.twin is not None:
        o = ["static %s\n{\n" % prototype(d, op, "gen_%s" % op.name, True)]
        per_thread = "per_thread"
    elif not pub:
        o = ["%s\n{\n" % prototype(d, op, rpc_name(d, op), op.per_thread())]
        per_thread = "per_thread"
    else:
        o = ["%s\n{\n" % prototype(d, op, op.name)]
        per_thread = "0"
    o.append("    struct apigen_call c;\n    %s r;\n" % d.result)
    for a in op.outs:
        if a.kind == "struct":
            o.append("    %s o_%s;\n" % (a.c_type(), a.name))
        else:
            o.append("    %s o_%s;\n" % (a.codec()[1], a.name))
    o.append("\n")
    for a in op.outs:
        if not a.optional:
            o.append("    if (%s == NULL)\n        return %s;\n" % (a.name, ret % d.invalid))
    o.append("    r = %s_fe_begin(&c);\n" % d.plugin)
    o.append("    if (r != %s)\n        return %s;\n" % (d.success, ret % "r"))
    for a in op.ins:
        codec, wtype = a.codec()
        if a.kind == "devptr":
            val = "(uint64_t)(uintptr_t)%s" % a.name
        elif a.kind == "handle":
            val = a.handle.fe_wire(a.name, per_thread)
        else:
            val = "(%s)%s" % (wtype, a.name)
        o.append("    apigen_put_%s(&c, %s);\n" % (codec, val))
    if "async" in op.flags and op.post_if is None:
        o.append("    r = %s_fe_post(&c, %s, %s);\n" % (d.plugin, op_enum(d, op), flags))
        o.append("    return %s;\n}\n" % (ret % "r"))
        return "".join(o)
    if op.post_if is not None:
        # An rpc function without handles has no per_thread argument.
        takes_pt = op.twin is not None or (not pub and op.per_thread())
        args = ", ".join([a.name for a in op.args] + [per_thread if takes_pt else "0"])
        o.append("    if (%s(%s))\n" % (op.post_if, args))
        o.append("        return %s;\n" % (ret % ("%s_fe_post(&c, %s, %s)" % (
            d.plugin, op_enum(d, op), flags))))
    o.append("    r = %s_fe_run(&c, %s, %s);\n" % (d.plugin, op_enum(d, op), flags))
    if op.outs:
        o.append("    if (r == %s) {\n" % d.success)
        for a in op.outs:
            if a.kind == "struct":
                o.append("        apigen_get_bytes(&c, &o_%s, sizeof(o_%s));\n" % (a.name, a.name))
            else:
                o.append("        apigen_get_%s(&c, &o_%s);\n" % (a.codec()[0], a.name))
        o.append("    }\n")
    o.append("    r = %s_fe_end(&c, r);\n" % d.plugin)
    if op.outs:
        o.append("    if (r == %s) {\n" % d.success)
        for a in op.outs:
            guard = "if (%s != NULL)\n            " % a.name if a.optional else ""
            if a.kind == "struct":
                val = "o_%s" % a.name
            elif a.kind == "devptr":
                val = "(void *)(uintptr_t)o_%s" % a.name
            else:
                val = "(%s)o_%s" % (a.c_type(), a.name)
            o.append("        %s*%s = %s;\n" % (guard, a.name, val))
        o.append("    }\n")
    o.append("    return %s;\n}\n" % (ret % "r"))
    return "".join(o)


def twin_name(op):
    return "%s_%s" % (op.name, op.twin)


def fe_twins(d, op):
    args = ", ".join(a.name for a in op.args)
    sep = ", " if args else ""
    return "".join("\n%s\n{\n    return gen_%s(%s%s%d);\n}\n" % (
        prototype(d, op, name), op.name, args, sep, pt)
        for name, pt in ((op.name, 0), (twin_name(op), 1)))


def gen_fe_c(d, src):
    out = [banner(src), includes(d, d.fe_includes, ['"%s_fe_gen.h"' % d.plugin,
                                                   '"%s_ops.h"' % d.plugin])]
    twins = [op for op in d.ops if op.fe == "auto" and op.twin is not None]
    if twins:
        # The library's headers declare the twins only when the program is
        # compiled for per-thread default streams; exported like the rest.
        out.append("\n#pragma GCC visibility push(default)\n")
        for op in twins:
            out.append("%s;\n" % prototype(d, op, twin_name(op)))
        out.append("#pragma GCC visibility pop\n")
    for op in d.ops:
        if op.fe != "manual":
            out.append("\n" + fe_stub(d, op))
            if op.fe == "auto" and op.twin is not None:
                out.append(fe_twins(d, op))
    return "".join(out)


def gen_be_h(d, src):
    guard = "GVS_%s_BE_GEN_H" % d.plugin.upper()
    out = [banner(src), "#ifndef %s\n#define %s\n\n" % (guard, guard)]
    out.append('#include "gvs/plugin.h"\n\n')
    out.append("/* Hand-written handlers the generated table names. */\n")
    for op in d.ops:
        if op.be == "manual" and "notify" not in op.flags:
            out.append("int %s(struct gvs_call *call);\n" % handler_name(d, op))
    if any("blocking" in op.flags for op in d.ops):
        out.append("\n/* Runs after the handler of every blocking op, before its reply\n"
                   " * leaves. */\n")
        out.append("void %s_be_after_blocking(struct gvs_call *call);\n" % d.plugin)
    if any("async" in op.flags and op.be == "auto" for op in d.ops):
        out.append("\n/* Takes the failure r (a result code) of a posted call of a\n"
                   " * generated handler, which has no reply to carry it. */\n")
        out.append("void %s_be_posted_failure(struct gvs_call *call, int r);\n" % d.plugin)
    if d.be_call:
        names = sorted({op.name for op in d.ops if op.be == "auto"})
        out.append("\n/* The API functions the generated handlers call, through\n"
                   " * %s(NAME): X(NAME) each. */\n" % d.be_call)
        out.append("#define %s_BE_CALLED(X)" % d.plugin.upper())
        for n in names:
            out.append(" \\\n    X(%s)" % n)
        out.append("\n")
    out.append("\n/* The plugin's op table, ending with GVS_OP_END. */\n")
    out.append("extern const struct gvs_op %s_op_table[];\n\n#endif\n" % d.plugin)
    return "".join(out)


def be_handler(d, op):
    o = ["static int gen_%s(struct gvs_call *call)\n{\n" % op.name]
    o.append("    struct apigen_call c = {call->out, call->in, 0};\n")
    for a in op.ins:
        o.append("    %s a_%s;\n" % (a.codec()[1], a.name))
    for a in op.ins:
        if a.kind == "handle":
            o.append("    %s h_%s = 0;\n" % (a.c_type(), a.name))
    for a in op.outs:
        if a.kind == "struct":
            o.append("    %s o_%s;\n" % (a.c_type(), a.name))
        elif a.kind == "devptr":
            o.append("    void *o_%s = NULL;\n" % a.name)
        else:
            o.append("    %s o_%s = 0;\n" % (a.c_type(), a.name))
    o.append("    %s r;\n\n" % d.result)
    for a in op.outs:
        if a.kind == "struct":
            o.append("    memset(&o_%s, 0, sizeof(o_%s));\n" % (a.name, a.name))
    for a in op.ins:
        o.append("    apigen_get_%s(&c, &a_%s);\n" % (a.codec()[0], a.name))
    o.append("    if (apigen_end(&c) < 0)\n        return c.rc;\n")
    params = []
    for a in op.args:
        if a.direction == "out":
            params.append("&o_%s" % a.name)
        elif a.kind == "devptr":
            params.append("(void *)(uintptr_t)a_%s" % a.name)
        elif a.kind == "handle":
            params.append("h_%s" % a.name)
        else:
            params.append("(%s)a_%s" % (a.c_type(), a.name))
    # Each step runs while the ones before it succeeded; the first
    # failure is the reply.  Handles that are table lookups come first;
    # the plugin's hook then makes the lane's device current on this
    # thread, which the handles resolved with the call (a lane's default
    # stream) need.
    handles = [a for a in op.ins if a.kind == "handle"]
    steps = [a.handle.be_resolve("a_" + a.name, "h_" + a.name)
             for a in handles if not a.handle.takes_call]
    if "device" in op.flags:
        steps.append("%s_be_enter(call)" % d.plugin)
    steps += [a.handle.be_resolve("a_" + a.name, "h_" + a.name)
              for a in handles if a.handle.takes_call]
    fn = "%s(%s)" % (d.be_call, op.name) if d.be_call else op.name
    steps.append("%s(%s)" % (fn, ", ".join(params)))
    o.append("    r = %s;\n" % steps[0])
    for step in steps[1:]:
        o.append("    if (r == %s)\n        r = %s;\n" % (d.success, step))
    if "async" in op.flags:
        o.append("    if (call->noreply && r != %s)\n        %s_be_posted_failure(call, (int)r);\n" % (
            d.success, d.plugin))
    o.append("    apigen_put_i32(&c, (int32_t)r);\n")
    if op.outs:
        o.append("    if (r == %s) {\n" % d.success)
        for a in op.outs:
            if a.kind == "struct":
                o.append("        apigen_put_bytes(&c, &o_%s, sizeof(o_%s));\n" % (a.name, a.name))
            elif a.kind == "devptr":
                o.append("        apigen_put_u64(&c, (uint64_t)(uintptr_t)o_%s);\n" % a.name)
            else:
                codec, wtype = a.codec()
                o.append("        apigen_put_%s(&c, (%s)o_%s);\n" % (codec, wtype, a.name))
        o.append("    }\n")
    o.append("    return c.rc;\n}\n")
    return "".join(o)


def blocking_wrapper(d, op):
    # What a synchronization made visible (device printf output, say)
    # leaves through the plugin's hook before the reply does.
    fn = "gen_%s" % op.name if op.be == "auto" else handler_name(d, op)
    return ("static int blocking_%s(struct gvs_call *call)\n{\n"
            "    int rc = %s(call);\n"
            "    %s_be_after_blocking(call);\n"
            "    return rc;\n}\n" % (op.name, fn, d.plugin))


def gen_be_c(d, src):
    out = [banner(src), includes(d, d.be_includes, ['"%s_be_gen.h"' % d.plugin,
                                                   '"%s_ops.h"' % d.plugin])]
    for op in d.ops:
        if op.be == "auto":
            out.append("\n" + be_handler(d, op))
    for op in d.ops:
        if "blocking" in op.flags:
            out.append("\n" + blocking_wrapper(d, op))
    out.append("\nconst struct gvs_op %s_op_table[] = {\n" % d.plugin)
    for op in sorted(d.ops, key=lambda o: o.num):
        if "notify" in op.flags:
            continue
        fn = "gen_%s" % op.name if op.be == "auto" else handler_name(d, op)
        if "blocking" in op.flags:
            fn = "blocking_%s" % op.name
        fl = "|".join(OP_FLAG_BITS[f] for f in sorted(op.flags) if f in OP_FLAG_BITS) or "0"
        out.append("    {%s, %s, \"%s\", %s},\n" % (op_enum(d, op), fl, op.name, fn))
    out.append("    GVS_OP_END,\n};\n")
    return "".join(out)


def write_file(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def generate(desc_path, out_dir):
    with open(desc_path, encoding="utf-8") as f:
        d = parse(desc_path, f.read())
    files = {
        "%s_ops.h" % d.plugin: gen_ops_h(d, desc_path),
        "%s_fe_gen.h" % d.plugin: gen_fe_h(d, desc_path),
        "%s_fe_gen.c" % d.plugin: gen_fe_c(d, desc_path),
        "%s_be_gen.h" % d.plugin: gen_be_h(d, desc_path),
        "%s_be_gen.c" % d.plugin: gen_be_c(d, desc_path),
    }
    os.makedirs(out_dir, exist_ok=True)
    for name, text in sorted(files.items()):
        write_file(os.path.join(out_dir, name), text)
    return d


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("description", help="the plugin's .api file")
    ap.add_argument("--out-dir", required=True, help="where the generated files go")
    ap.add_argument("--print-hash", action="store_true", help="print the table hash")
    ns = ap.parse_args(argv)
    try:
        d = generate(ns.description, ns.out_dir)
    except (DescError, OSError) as e:
        print("gvs_apigen: %s" % e, file=sys.stderr)
        return 1
    if ns.print_hash:
        print("0x%016x" % d.table_hash())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
