#!/usr/bin/env python3
"""Unit tests of gvs_apigen.py.  usage: test_gvs_apigen.py [DESCRIPTION]
(DESCRIPTION defaults to plugins/cudart/cudart.api)."""

import contextlib
import filecmp
import io
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gvs_apigen  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DESCRIPTION = os.path.join(HERE, "..", "..", "plugins", "cudart", "cudart.api")

GOOD = """\
plugin demo 7
result demoStatus success=demoOk invalid=demoBadValue
include <demo.h>
op 1 demoGetCount fe=rpc : out int count
op 2 demoSet device async : in int value, in size bytes
op 3 BULK manual
"""


# Handle types: obj is a table lookup, stream is resolved with the call
# and has a per-thread wire value.
HANDLES = GOOD + """\
handle obj demoObj be=demo_obj
handle stream demoStream be=demo_stream fe=demo_stream_wire call
op 4 demoObjGet device : out int value, in obj o
op 5 demoWait device ptsz blocking : in stream s, in obj o, in float f
"""


def parse(text):
    return gvs_apigen.parse("demo.api", text)


class Generation(unittest.TestCase):
    def test_twice_identical(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            gvs_apigen.generate(DESCRIPTION, a)
            gvs_apigen.generate(DESCRIPTION, b)
            names = sorted(os.listdir(a))
            self.assertEqual(names, sorted(os.listdir(b)))
            self.assertEqual(len(names), 5)
            match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
            self.assertEqual((mismatch, errors), ([], []))

    def test_hash_tracks_the_wire_not_the_spelling(self):
        base = parse(GOOD).table_hash()
        self.assertEqual(base, parse(GOOD).table_hash())
        renamed_arg = GOOD.replace("out int count", "out int n")
        self.assertEqual(base, parse(renamed_arg).table_hash())
        spaced = GOOD.replace("op 1 demoGetCount", "op 1    demoGetCount  ")
        self.assertEqual(base, parse(spaced).table_hash())
        for changed in (GOOD.replace("out int count", "out uint count"),
                        GOOD.replace("op 3 BULK", "op 4 BULK"),
                        GOOD.replace(" async", ""),
                        GOOD.replace("plugin demo 7", "plugin demo 8")):
            self.assertNotEqual(base, parse(changed).table_hash(), changed)

    def test_hash_is_fnv1a64(self):
        d = parse(GOOD)
        h = 0xCBF29CE484222325
        for byte in d.canonical().encode():
            h = ((h ^ byte) * 0x100000001B3) % (1 << 64)
        self.assertEqual(d.table_hash(), h)

    def test_every_op_in_the_enum(self):
        d = parse(GOOD)
        text = gvs_apigen.gen_ops_h(d, "demo.api")
        for name, num in (("demoGetCount", 1), ("demoSet", 2), ("BULK", 3)):
            self.assertIn("DEMO_OP_%s = %d," % (name, num), text)
        table = gvs_apigen.gen_be_c(d, "demo.api")
        self.assertIn("{DEMO_OP_BULK, 0, \"BULK\", demo_be_bulk}", table)
        self.assertIn("{DEMO_OP_demoSet, GVS_OP_ASYNC_OK", table)

    def test_blocking_ops_run_the_hook_after_the_handler(self):
        d = parse(GOOD + "op 4 waitAll blocking\n")
        c = gvs_apigen.gen_be_c(d, "demo.api")
        self.assertIn("{DEMO_OP_waitAll, GVS_OP_BLOCKING, \"waitAll\", blocking_waitAll}", c)
        wrapper = c[c.index("static int blocking_waitAll"):]
        self.assertLess(wrapper.index("gen_waitAll(call)"),
                        wrapper.index("demo_be_after_blocking(call)"))
        self.assertIn("void demo_be_after_blocking(struct gvs_call *call);",
                      gvs_apigen.gen_be_h(d, "demo.api"))
        self.assertNotIn("after_blocking", gvs_apigen.gen_be_h(parse(GOOD), "demo.api"))

    def test_post_if_decides_each_call(self):
        d = parse(HANDLES + "op 6 demoMark device ptsz async post_if=demo_may_post"
                            " : in stream s, in uint flags\n")
        h = gvs_apigen.gen_fe_h(d, "demo.api")
        self.assertIn("int demo_may_post(demoStream s, unsigned int flags, int per_thread);", h)
        c = gvs_apigen.gen_fe_c(d, "demo.api")
        body = c[c.index("static demoStatus gen_demoMark"):]
        body = body[:body.index("\n}\n")]
        self.assertLess(body.index("if (demo_may_post(s, flags, per_thread))"),
                        body.index("demo_fe_post(&c, DEMO_OP_demoMark, APIGEN_DEVICE)"))
        self.assertLess(body.index("demo_fe_post("), body.index("demo_fe_run("))
        # Unconditional posting stays as it was; the backend keeps the
        # failure of a posted call of either kind.
        plain = c[c.index("demoStatus demoSet(int value, size_t bytes)"):]
        self.assertNotIn("demo_fe_run", plain[:plain.index("\n}\n")])
        be = gvs_apigen.gen_be_c(d, "demo.api")
        mark = be[be.index("static int gen_demoMark"):]
        self.assertIn("if (call->noreply && r != demoOk)\n"
                      "        demo_be_posted_failure(call, (int)r);", mark)
        self.assertIn("void demo_be_posted_failure(struct gvs_call *call, int r);",
                      gvs_apigen.gen_be_h(d, "demo.api"))
        self.assertEqual(d.table_hash(),
                         parse(HANDLES + "op 6 demoMark device ptsz async"
                                         " : in stream s, in uint flags\n").table_hash())
        # An rpc function asks too; without handles it has no per_thread.
        r = parse(GOOD + "op 4 FILL fe=rpc device async post_if=demo_may_fill"
                         " : in u64 where, in int value\n")
        rc = gvs_apigen.gen_fe_c(r, "demo.api")
        fill = rc[rc.index("demoStatus demo_rpc_FILL("):]
        self.assertIn("if (demo_may_fill(where, value, 0))", fill[:fill.index("\n}\n")])

    def test_notify_ops_have_no_handler(self):
        text = GOOD + "op 4 EVENT notify\n"
        d = parse(text)
        self.assertIn("DEMO_OP_EVENT = 4,", gvs_apigen.gen_ops_h(d, "demo.api"))
        self.assertNotIn("DEMO_OP_EVENT", gvs_apigen.gen_be_c(d, "demo.api"))
        self.assertNotIn("demo_be_event", gvs_apigen.gen_be_h(d, "demo.api"))
        self.assertNotEqual(d.table_hash(),
                            parse(text.replace(" notify", " manual")).table_hash())


class Handles(unittest.TestCase):
    def test_frontend_sends_the_wire_value(self):
        c = gvs_apigen.gen_fe_c(parse(HANDLES), "demo.api")
        get = c[c.index("demoStatus demoObjGet(int *value, demoObj o)"):]
        self.assertIn("apigen_put_u64(&c, (uint64_t)(uintptr_t)o);", get)
        body = c[c.index("static demoStatus gen_demoWait(demoStream s, demoObj o, "
                         "float f, int per_thread)"):]
        self.assertIn("apigen_put_u64(&c, demo_stream_wire(s, per_thread));", body)
        self.assertIn("apigen_put_f32(&c, (float)f);", body)
        self.assertIn("return demo_fe_ret(r);", body)

    def test_optional_outs_may_be_null(self):
        d = parse(GOOD + "op 9 demoRange : out? int lo, out int hi\n")
        c = gvs_apigen.gen_fe_c(d, "demo.api")
        body = c[c.index("demoStatus demoRange(int *lo, int *hi)"):]
        self.assertNotIn("if (lo == NULL)\n        return", body)
        self.assertIn("if (hi == NULL)\n        return", body)
        self.assertIn("if (lo != NULL)\n            *lo = (int)o_lo;", body)
        self.assertIn("        *hi = (int)o_hi;", body)
        # The wire is the same: the hash does not see the `?`.
        plain = parse(GOOD + "op 9 demoRange : out int lo, out int hi\n")
        self.assertEqual(d.table_hash(), plain.table_hash())

    def test_twin_entry_points(self):
        c = gvs_apigen.gen_fe_c(parse(HANDLES), "demo.api")
        proto = "demoStatus demoWait_ptsz(demoStream s, demoObj o, float f)"
        decl = c.index("#pragma GCC visibility push(default)\n%s;\n" % proto)
        self.assertLess(decl, c.index("static demoStatus gen_demoWait"))
        self.assertIn("demoStatus demoWait(demoStream s, demoObj o, float f)\n{\n"
                      "    return gen_demoWait(s, o, f, 0);\n}\n", c)
        self.assertIn(proto + "\n{\n    return gen_demoWait(s, o, f, 1);\n}\n", c)
        ptds = parse(HANDLES.replace(" ptsz ", " ptds "))
        self.assertIn("demoWait_ptds(", gvs_apigen.gen_fe_c(ptds, "demo.api"))
        self.assertNotIn("visibility", gvs_apigen.gen_fe_c(parse(GOOD), "demo.api"))

    def test_rpc_takes_per_thread(self):
        d = parse(HANDLES + "op 6 STREAM_OP fe=rpc device : in stream s\n")
        proto = "demoStatus demo_rpc_STREAM_OP(demoStream s, int per_thread)"
        self.assertIn(proto + ";", gvs_apigen.gen_fe_h(d, "demo.api"))
        self.assertIn(proto + "\n{", gvs_apigen.gen_fe_c(d, "demo.api"))

    def test_backend_resolves_before_the_call(self):
        c = gvs_apigen.gen_be_c(parse(HANDLES), "demo.api")
        body = c[c.index("static int gen_demoWait"):]
        body = body[:body.index("\n}\n")]
        self.assertIn("    demoStream h_s = 0;\n    demoObj h_o = 0;\n", body)
        self.assertIn("    apigen_get_f32(&c, &a_f);\n", body)
        steps = ["r = demo_obj(a_o, &h_o);",
                 "if (r == demoOk)\n        r = demo_be_enter(call);",
                 "if (r == demoOk)\n        r = demo_stream(call, a_s, &h_s);",
                 "if (r == demoOk)\n        r = demoWait(h_s, h_o, (float)a_f);",
                 "apigen_put_i32(&c, (int32_t)r);"]
        at = [body.index(step) for step in steps]
        self.assertEqual(at, sorted(at))
        self.assertNotIn("demo_be_demowait", gvs_apigen.gen_be_h(parse(HANDLES), "demo.api"))

    def test_backend_calls_through_the_plugins_macro(self):
        d = parse(GOOD.replace("include <demo.h>\n",
                               "include <demo.h>\nbe-call DEMO_DRV\n"))
        c = gvs_apigen.gen_be_c(d, "demo.api")
        self.assertIn("r = DEMO_DRV(demoSet)((int)a_value, (size_t)a_bytes);", c)
        h = gvs_apigen.gen_be_h(d, "demo.api")
        self.assertIn("#define DEMO_BE_CALLED(X) \\\n    X(demoGetCount) \\\n"
                      "    X(demoSet)\n", h)
        self.assertEqual(d.table_hash(), parse(GOOD).table_hash())
        self.assertNotIn("DEMO_BE_CALLED", gvs_apigen.gen_be_h(parse(GOOD), "demo.api"))

    def test_types_and_twins_are_hashed(self):
        base = parse(HANDLES).table_hash()
        for changed in (HANDLES.replace(" ptsz", ""),
                        HANDLES.replace(" ptsz", " ptds"),
                        HANDLES.replace("in obj o\n", "in u64 o\n"),
                        HANDLES.replace("in float f", "in uint f")):
            self.assertNotEqual(base, parse(changed).table_hash(), changed)
        self.assertIn("op 5 demoWait fe=auto be=auto blocking,device,ptsz : "
                      "in stream,in obj,in float", parse(HANDLES).canonical())


class Malformed(unittest.TestCase):
    CASES = [
        ("op 1 demoGetCount\n", 1, "'plugin' and 'result' must come before"),
        (GOOD + "op 2 other\n", 7, "op number 2 already used on line 5"),
        (GOOD + "op 9 demoSet\n", 7, "op name demoSet already used"),
        (GOOD + "op 0 zero\n", 7, "out of range"),
        (GOOD + "op x bad\n", 7, "not a decimal integer"),
        (GOOD + "op 9 f : out double x\n", 7, "unknown type 'double'"),
        (GOOD + "op 9 f : in struct:s x\n", 7, "struct arguments can only be out"),
        (GOOD + "op 9 f : sideways int x\n", 7, "direction"),
        (GOOD + "op 9 f : in int x, in int x\n", 7, "duplicate argument"),
        (GOOD + "op 9 f wobbly\n", 7, "unknown op attribute 'wobbly'"),
        (GOOD + "op 9 f manual : in int x\n", 7, "manual op"),
        (GOOD + "op 9 f async : out int x\n", 7, "async op cannot have out"),
        (GOOD + "op 9 f post_if=p : in int x\n", 7, "post_if needs an async op with fe=auto or fe=rpc"),
        (GOOD + "op 9 f manual async post_if=p\n", 7, "post_if needs an async op"),
        (GOOD + "op 9 f async post_if=1p : in int x\n", 7, "bad post_if function"),
        (GOOD + "op 9 f notify inline\n", 7, "notify op takes no other"),
        (GOOD + "op 9 f notify : in int x\n", 7, "notify op takes no other"),
        (GOOD + "frobnicate\n", 7, "unknown directive"),
        (GOOD + "be-call 1x\n", 7, "expected 'be-call MACRO'"),
        ("plugin demo 7\nplugin demo 8\n", 2, "plugin given twice"),
        ("plugin demo\n", 1, "expected 'plugin NAME ID'"),
        ("plugin demo 1\nresult t\n", 2, "expected 'result TYPE"),
        ("plugin demo 1\ninclude demo.h\n", 2, "expected <header>"),
        ("# nothing\n", 1, "missing 'plugin"),
        (GOOD + "handle h demoH\n", 7, "expected 'handle NAME CTYPE be=FN"),
        (GOOD + "handle h demoH be=f lane\n", 7, "expected 'handle NAME CTYPE be=FN"),
        (GOOD + "handle int demoH be=f\n", 7, "handle type 'int' already defined"),
        (HANDLES + "op 9 f : out obj x\n", 11, "handle arguments can only be in"),
        (HANDLES + "op 9 f : in stream s\n", 11, "resolved with the call needs a device op"),
        (HANDLES + "op 9 f device ptsz : in obj x\n", 11, "ptsz needs fe=auto and a handle argument with fe="),
        (HANDLES + "op 9 f fe=rpc device ptsz : in stream s\n", 11, "ptsz needs fe=auto"),
        (HANDLES + "op 9 f device ptsz ptds : in stream s\n", 11, "exclude each other"),
    ]

    def test_errors_name_the_line(self):
        for text, line, message in self.CASES:
            with self.subTest(message=message):
                with self.assertRaises(gvs_apigen.DescError) as cm:
                    parse(text)
                self.assertIn("demo.api:%d: " % line, str(cm.exception))
                self.assertIn(message, str(cm.exception))

    def test_command_line_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.api")
            with open(bad, "w") as f:
                f.write(GOOD + "op 2 again\n")
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = gvs_apigen.main([bad, "--out-dir", os.path.join(tmp, "out")])
            self.assertEqual(rc, 1)
            self.assertIn("bad.api:7:", err.getvalue())
            self.assertFalse(os.path.exists(os.path.join(tmp, "out")))


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        DESCRIPTION = sys.argv.pop(1)
    unittest.main()
