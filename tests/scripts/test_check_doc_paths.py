#!/usr/bin/python3
"""Tests of scripts/check-doc-paths.py on small trees made here: which names
in a document count as repository paths, and the exact report for one that
does not exist."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "check-doc-paths.py")

# Every allow-list entry must match a path some document names (else the
# check reports it): a tree the entries all apply to.
ALLOWED_USES = """
`rxe_req.c` `drivers/infiniband/sw/rxe/rxe_resp.c` `providers/rxe` `libibverbs/driver.h`
`src/perftest_communication.c` `util/dist.cc` `build-x/bench.json` `out/a.json`
`summary.json` `timeseries.csv` `messages.csv` `rc_mct.csv` `hostile.json`
"""


def make_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def run(root):
    r = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


class CheckDocPaths(unittest.TestCase):
    def tree(self, doc, extra=None):
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
        files = {
            "datapath/engine/vnic.h": "",
            "datapath/engine/vnic/rx.h": "",
            "datapath/engine/vnic/tx.h": "",
            "scripts/test.sh": "",
            "testbed/meson.build": "exe = executable('uroce-testbed', files('main.cpp'))\n",
            "testbed/main.cpp": "",
            "docs/other.md": ALLOWED_USES,
            "docs/a.md": doc,
        }
        files.update(extra or {})
        make_tree(d, files)
        return d

    def test_Check_ExistingPathsPass(self):
        d = self.tree("Rooted `datapath/engine/vnic.h` and datapath/engine/ in prose,\n"
                      "relative vnic/rx.h, bare tx.h, braces `vnic/{rx,tx}.h`,\n"
                      "both `vnic/rx.h/.h`, glob `vnic/*.h`,\n"
                      "a line `vnic.h:12`, a link [x](other.md), a build target\n"
                      "testbed/uroce-testbed, a folder `scripts/`.\n")
        code, out = run(d)
        self.assertEqual(code, 0, out)
        self.assertEqual(out, ["check-doc-paths: 2 document(s), every path they name exists"])

    def test_Check_MissingPathsReportedWithTheirLine(self):
        d = self.tree("ok `vnic.h`\n"
                      "gone `bench/qp_scale.cpp` and engine_loop.h\n"
                      "partial vnic/gone.h, braces vnic/{rx,lost}.h, link [y](gone.md)\n")
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out, [
            "docs/a.md:2: bench/qp_scale.cpp: no such file in the tree",
            "docs/a.md:2: engine_loop.h: no such file in the tree",
            # A line's links first, then its other names.
            "docs/a.md:3: docs/gone.md: no such file in the tree",
            "docs/a.md:3: vnic/gone.h: no such file in the tree",
            "docs/a.md:3: vnic/lost.h: no such file in the tree",
            "check-doc-paths: 5 missing path(s) in 2 document(s)",
        ])

    def test_Check_HiddenTopLevelFoldersAreChecked(self):
        d = self.tree("`.ci/run` and `.ci/gone`, not `.clang-format` (not in this tree)\n",
                      {".ci/run": ""})
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out[0], "docs/a.md:1: .ci/gone: no such file in the tree")

    def test_Check_NotPathsAreIgnored(self):
        d = self.tree("URL https://example.com/x/y.h, absolute /usr/lib/x.so and\n"
                      "/dev/infiniband/rdma_cm, system `<infiniband/verbs.h>`,\n"
                      "templates `tests/<path>/test_<file>.cpp` and `ports/N/gids/I`,\n"
                      "`RUN/uroced.sock`, prose RX/TX and rkey/bounds/, e.g. 1.5.\n"
                      "```\nscripts/test.sh --json w34.json\n```\n")
        code, out = run(d)
        self.assertEqual(code, 0, out)

    def test_Check_PathsInCodeBlocksAreChecked(self):
        d = self.tree("```\nscripts/gone.sh --json w34.json --in out/gone.json\n"
                      "  diagram ─▶ (vnic/gone.h, vnic/rx.h)\n"
                      "scripts/test.sh --scenario scripts/lost.sh\n```\n")
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out, [
            "docs/a.md:2: scripts/gone.sh: no such file in the tree",
            "docs/a.md:3: vnic/gone.h: no such file in the tree",
            # An option's value is checked when it is a path from the root.
            "docs/a.md:4: scripts/lost.sh: no such file in the tree",
            "check-doc-paths: 3 missing path(s) in 2 document(s)",
        ])

    def test_Check_ReadmesBelowTheRootAreDocuments(self):
        d = self.tree("", {"README.md": "`docs/a.md`\n", "verbs-provider/README.md": "`gone.h`\n"})
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out[0], "verbs-provider/README.md:1: gone.h: no such file in the tree")

    def test_Check_BuildDirectoriesAreNotTheTree(self):
        # A file only a build directory holds does not count as existing.
        d = self.tree("`gen.h`\n", {"build/meson-private/x": "", "build/gen.h": ""})
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out[0], "docs/a.md:1: gen.h: no such file in the tree")

    def test_Check_UnusedAllowListEntryFails(self):
        d = self.tree("", {"docs/other.md": ALLOWED_USES.replace("`hostile.json`", "")})
        code, out = run(d)
        self.assertEqual(code, 1)
        self.assertEqual(out[0], "check-doc-paths.py: allow-list entry hostile.json matches no "
                         "path a document names: remove it")


if __name__ == "__main__":
    unittest.main()
