#!/usr/bin/env python3
"""Tests of readme-commands.py, and of the README's blocks that CI runs
with it.  usage: test_readme_commands.py CMAKE (the cmake that configures
a scratch build for the default build type)."""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "readme-commands.py")
_spec = importlib.util.spec_from_file_location("readme_commands", SCRIPT)
rc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)
CMAKE = "cmake"

SAMPLE = """\
# A project

<!-- ci: setup -->
```sh
apt-get install -y thing
```

Not for CI:

```
rm -rf /
```

<!-- ci: test -->

```
make check
make more
```
"""


class Extraction(unittest.TestCase):
    def test_marked_blocks_only(self):
        self.assertEqual(rc.blocks(SAMPLE), {
            "setup": "apt-get install -y thing\n",
            "test": "make check\nmake more\n"})

    def test_order_is_the_callers(self):
        self.assertEqual([n for n, _ in rc.select(SAMPLE, ["test", "setup"])],
                         ["test", "setup"])

    def test_missing_name(self):
        with self.assertRaisesRegex(rc.ReadmeError,
                                    r"no block marked <!-- ci: build -->"):
            rc.select(SAMPLE, ["setup", "build"])

    def test_marker_without_block(self):
        with self.assertRaisesRegex(rc.ReadmeError, "not followed by"):
            rc.blocks("<!-- ci: build -->\ncmake .\n")

    def test_marked_twice(self):
        with self.assertRaisesRegex(rc.ReadmeError, "twice"):
            rc.blocks(SAMPLE + "<!-- ci: test -->\n```\nx\n```\n")

    def test_unclosed(self):
        with self.assertRaisesRegex(rc.ReadmeError, "not closed"):
            rc.blocks("<!-- ci: build -->\n```\ncmake .\n")

    def test_run_stops_at_the_first_failure(self):
        with tempfile.TemporaryDirectory() as d:
            readme = os.path.join(d, "README.md")
            with open(readme, "w") as f:
                f.write("<!-- ci: a -->\n```\necho one > out\n```\n"
                        "<!-- ci: b -->\n```\nfalse\necho two >> out\n```\n"
                        "<!-- ci: c -->\n```\necho three >> out\n```\n")
            p = subprocess.run([sys.executable, SCRIPT, "--run", "--readme",
                                readme, "a", "b", "c"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            with open(os.path.join(d, "out")) as f:
                self.assertEqual(f.read(), "one\n")


class Readme(unittest.TestCase):
    """What the README promises a new user, in the blocks CI runs."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            cls.blocks = dict(rc.select(f.read(), ["setup", "build", "test"]))

    def test_setup_is_one_line_with_every_package(self):
        lines = self.blocks["setup"].splitlines()
        self.assertEqual(len(lines), 1, lines)
        words = lines[0].split()
        install = words.index("install")
        for pkg in ("build-essential", "cmake", "python3", "libssl-dev",
                    "openssl"):
            self.assertIn(pkg, words[install:])

    def test_build_jobs_are_bounded(self):
        build = self.blocks["build"]
        self.assertIn('cmake --build build -j"$(nproc)"', build)
        # A bare -j (no count) runs as many jobs as make finds targets.
        self.assertIsNone(re.search(r"-j(\s|$)", build), build)

    def test_tests_are_tools_test_sh(self):
        self.assertEqual(self.blocks["test"], "tools/test.sh\n")

    def test_ci_runs_them(self):
        with open(os.path.join(ROOT, ".ci", "run")) as f:
            ci = f.read()
        self.assertRegex(
            ci, r"(?m)^python3 tools/readme-commands\.py --run setup build "
                r"test$")

    def test_default_build_type(self):
        """The README's build line names no build type: it is
        RelWithDebInfo."""
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([CMAKE, "-S", ROOT, "-B", d,
                                "-DGVS_BUILD_GPU_TESTS=OFF"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(d, "CMakeCache.txt")) as f:
                cache = f.read()
        self.assertIn("CMAKE_BUILD_TYPE:STRING=RelWithDebInfo\n", cache)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CMAKE = sys.argv.pop(1)
    unittest.main()
