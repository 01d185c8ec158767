#!/usr/bin/env python3
"""cuda.procaddr_gen: tools/apigen/gvs_procaddr.py builds its table from a
probe's records, and stops where a record does not fit what the frontend
derives (procaddr.h).  The real data is replayed by cuda.procaddr.

usage: test_gvs_procaddr.py"""

import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "apigen"))
import gvs_procaddr as gp  # noqa: E402

EXPORTS = {"cuFoo": "", "cuFoo_v2": "", "cuFoo_v2_ptsz": ""}
FOO_V1 = ("*..-1=0,-,cuFoo_v2 0..999=500,-,unset 1000..1999=0,-,cuFoo "
          "2000..13000=0,-,cuFoo_v2 13001..*=1,-,unset")
FOO_V2 = ("*..-1=0,0,cuFoo_v2 0..999=0,2,NULL 1000..1999=0,0,cuFoo "
          "2000..13000=0,0,cuFoo_v2 13001..*=1,u,unset")
NOPE_V1 = "*..13000=500,-,unset 13001..*=1,-,unset"
NOPE_V2 = "*..13000=0,1,NULL 13001..*=1,u,unset"


def records():
    """{(name, flags, api): ranges} of a small, valid probe."""
    r = {}
    for flags in (0, 1, 2):
        v2 = "cuFoo_v2_ptsz" if flags == 2 else "cuFoo_v2"
        r[("cuFoo", flags, "v1")] = FOO_V1.replace("cuFoo_v2", v2)
        r[("cuFoo", flags, "v2")] = FOO_V2.replace("cuFoo_v2", v2)
        for name in ("cuNope", '"cu\\u0020Nope"'):
            r[(name, flags, "v1")], r[(name, flags, "v2")] = NOPE_V1, NOPE_V2
    return r


def legacy(recs, name, api, ranges):
    """Sets the ranges of flags 0 and 1 alike."""
    recs[(name, 0, api)] = recs[(name, 1, api)] = ranges


def build(recs, extra=""):
    """gvs_procaddr's table of these records, through a file."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("probe procaddr 1\n" + extra)
        for (name, flags, api), ranges in recs.items():
            f.write("proc %s %d %s init : %s\n" % (name, flags, api, ranges))
        f.flush()
        return gp.build(gp.read_series(f.name), EXPORTS)


class Table(unittest.TestCase):
    def test_steps(self):
        table, unknown = build(records())
        self.assertEqual(sorted(table), ["cuFoo"])
        legacy, per_thread = table["cuFoo"]
        self.assertEqual(legacy, ((gp.INT_MIN, "cuFoo_v2"), (0, gp.TOO_OLD), (1000, "cuFoo"),
                                  (2000, "cuFoo_v2"), (13001, gp.INVALID)))
        self.assertEqual(per_thread[3], (2000, "cuFoo_v2_ptsz"))
        self.assertEqual(unknown, (((gp.INT_MIN, gp.NOT_FOUND), (13001, gp.INVALID)),) * 2)

    def test_c(self):
        table, unknown = build(records())
        c = gp.gen_c(table, unknown, "probe.txt")
        self.assertIn('"cuFoo\\0"', c)
        self.assertIn("{0, {{2, 5}, {7, 5}}}, /* cuFoo */", c)
        self.assertIn("{INT32_MIN, PROCADDR_NOT_FOUND}, {13001, PROCADDR_INVALID}", c)
        self.assertIn("{INT32_MIN, 1}, {0, PROCADDR_TOO_OLD}, {1000, 0}", c)
        self.assertIn("(void *)&cuFoo_v2_ptsz, /* 2 */", c)


class Refused(unittest.TestCase):
    def refused(self, recs, message, extra=""):
        with self.assertRaises(gp.GenError) as e:
            build(recs, extra)
        self.assertIn(message, str(e.exception))

    def test_v1_unlike_v2(self):
        r = records()
        legacy(r, "cuFoo", "v1", FOO_V1.replace("0..999=500", "0..999=1"))
        self.refused(r, "v1 answers 1,-,unset at 0..999, not 500,-,unset")

    def test_not_exported(self):
        r = records()
        r[("cuFoo", 2, "v2")] = FOO_V2.replace("cuFoo_v2", "cuFoo_v3")
        self.refused(r, "gives cuFoo_v3, which the frontend does not export")

    def test_flag_1(self):
        r = records()
        r[("cuFoo", 1, "v2")] = r[("cuFoo", 2, "v2")]
        self.refused(r, "cuFoo: flags 1 answers otherwise than flags 0")

    def test_unknown_answer(self):
        r = records()
        legacy(r, "cuFoo", "v2", FOO_V2.replace("0..999=0,2,NULL", "0..999=3,u,unset"))
        self.refused(r, "no such answer in procaddr.h: 3,u,unset")

    def test_gap(self):
        r = records()
        r[("cuNope", 0, "v2")] = "*..12000=0,1,NULL 13001..*=1,u,unset"
        self.refused(r, "range 13001..*=1,u,unset does not follow the previous one")

    def test_unknown_names_differ(self):
        r = records()
        legacy(r, "cuNope", "v1", "*..12000=500,-,unset 12001..*=1,-,unset")
        legacy(r, "cuNope", "v2", "*..12000=0,1,NULL 12001..*=1,u,unset")
        self.refused(r, "the names never found answer in 2 ways, not one")

    def test_before_cuinit(self):
        self.refused(records(), "otherwise before cuInit",
                     "proc cuFoo 0 v2 noinit : %s\n" % FOO_V2)

    def test_unstable(self):
        self.refused(records(), "not a step function", "unstable cuFoo 0 v2 init : x\n")


if __name__ == "__main__":
    unittest.main()
