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

    def test_notify_ops_have_no_handler(self):
        text = GOOD + "op 4 EVENT notify\n"
        d = parse(text)
        self.assertIn("DEMO_OP_EVENT = 4,", gvs_apigen.gen_ops_h(d, "demo.api"))
        self.assertNotIn("DEMO_OP_EVENT", gvs_apigen.gen_be_c(d, "demo.api"))
        self.assertNotIn("demo_be_event", gvs_apigen.gen_be_h(d, "demo.api"))
        self.assertNotEqual(d.table_hash(),
                            parse(text.replace(" notify", " manual")).table_hash())


class Malformed(unittest.TestCase):
    CASES = [
        ("op 1 demoGetCount\n", 1, "'plugin' and 'result' must come before"),
        (GOOD + "op 2 other\n", 7, "op number 2 already used on line 5"),
        (GOOD + "op 9 demoSet\n", 7, "op name demoSet already used"),
        (GOOD + "op 0 zero\n", 7, "out of range"),
        (GOOD + "op x bad\n", 7, "not a decimal integer"),
        (GOOD + "op 9 f : out float x\n", 7, "unknown type 'float'"),
        (GOOD + "op 9 f : in struct:s x\n", 7, "struct arguments can only be out"),
        (GOOD + "op 9 f : sideways int x\n", 7, "direction"),
        (GOOD + "op 9 f : in int x, in int x\n", 7, "duplicate argument"),
        (GOOD + "op 9 f wobbly\n", 7, "unknown op attribute 'wobbly'"),
        (GOOD + "op 9 f manual : in int x\n", 7, "manual op"),
        (GOOD + "op 9 f async : out int x\n", 7, "async op cannot have out"),
        (GOOD + "op 9 f notify inline\n", 7, "notify op takes no other"),
        (GOOD + "op 9 f notify : in int x\n", 7, "notify op takes no other"),
        (GOOD + "frobnicate\n", 7, "unknown directive"),
        ("plugin demo 7\nplugin demo 8\n", 2, "plugin given twice"),
        ("plugin demo\n", 1, "expected 'plugin NAME ID'"),
        ("plugin demo 1\nresult t\n", 2, "expected 'result TYPE"),
        ("plugin demo 1\ninclude demo.h\n", 2, "expected <header>"),
        ("# nothing\n", 1, "missing 'plugin"),
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
