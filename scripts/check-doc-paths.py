#!/usr/bin/python3
"""Fails when a document names a repository path that does not exist.

    check-doc-paths.py [SOURCE_ROOT]     (default: the parent of scripts/)

Documents: every Markdown file under docs/, README.md at the root and every
README.md below it, and man pages (files named *.1 to *.8) if the tree has
any. The build's `docs` suite runs this (tests/meson.build).

What counts as a repository path, in code spans, links and plain text alike:
  - a path whose first component is an entry of the source root
    (`datapath/engine/vnic.h`, `scripts/test.sh`, `docs/`): it must exist
    exactly;
  - a relative path starting elsewhere (`vnic/rx.h`, `transport/wr_queue.h`):
    some file or folder of the tree must end with it;
  - a bare file name with a source or data extension (`engine.h`,
    `loop2.toml`): some file of the tree must have that name.
A Markdown link's target is resolved against the document's folder. In a
code block, the value of a command's option (`--json w34.json`) is often an
output, so there only a path from the root is checked.
`a.{h,cpp}` and `a.h/.cpp` stand for both files, `*` globs, and a `:LINE`
suffix is ignored. Not paths: URLs, absolute paths (installed or system
files: /usr/..., /dev/infiniband, /proc/PID/...), headers in angle brackets
(`<infiniband/verbs.h>`), and templates with a placeholder
(`tests/<path>/test_<file>.cpp`, `...`).

Names that look like repository paths but deliberately are not in this tree
are listed in ALLOWED below, each with its reason. Everything else is fixed
in the document, not exempted.

Exit status 0 when every path exists, 1 otherwise (one line per missing
path: document:line: path).
"""
import fnmatch
import os
import re
import sys

# (pattern on the path as written, why it is not in the tree)
ALLOWED = [
    ("rxe_*.c", "the Linux rxe driver's sources, cited for comparison"),
    ("drivers/infiniband/sw/rxe/*", "the Linux kernel's tree, cited for comparison"),
    ("providers/rxe*", "rdma-core's tree, cited for comparison"),
    ("libibverbs/*", "rdma-core's tree, cited for comparison"),
    ("src/*", "perftest's and UCX's trees, cited for comparison"),
    ("util/dist.cc", "the Homa simulator's tree, cited for comparison"),
    ("build*/*", "a build directory (scripts/test.sh, scripts/bench.sh make them)"),
    ("out/*", "an output folder named on a command line"),
    ("summary.json", "the testbed writes it into its output folder (docs/testbed.md)"),
    ("timeseries.csv", "the testbed writes it into its output folder (docs/testbed.md)"),
    ("messages.csv", "the testbed writes it into its output folder (docs/testbed.md)"),
    ("rc_mct.csv", "the testbed writes it into its output folder (docs/testbed.md)"),
    ("hostile.json", "the hostile-peer suite writes it into its output folder"),
]

# Extensions a bare file name must have to count as a path of this tree.
EXTENSIONS = ("h", "cpp", "c", "py", "sh", "toml", "md", "build", "in", "map",
              "json", "csv", "png", "conf", "txt", "driver")

SKIP_DIRS = {".git", "__pycache__", "subprojects", "node_modules"}

# A path-like token: letters, digits and the characters paths, braces and
# globs use. Trailing punctuation is stripped afterwards.
TOKEN = re.compile(r"[A-Za-z0-9_.+\-/{},*<>~:@]+")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"^[A-Z]{1,3}$")
EXT = re.compile(r"\.(" + "|".join(EXTENSIONS) + r")$")


def file_like(tok):
    """A path with an extension of EXTENSIONS, or any extension (`a/b.*`)."""
    return EXT.search(tok) is not None or tok.endswith(".*")


def source_dirs(root):
    """(folder relative to root, its files) for every folder of the source
    tree: .git and build directories (a meson build tree, or a folder of the
    root named build*) left out."""
    for d, dirs, files in os.walk(root):
        keep = []
        for x in dirs:
            full = os.path.join(d, x)
            try:
                entries = os.listdir(full)
            except OSError:
                continue
            if x in SKIP_DIRS or "meson-private" in entries or "build.ninja" in entries \
                    or (d == root and x.startswith("build")):
                continue
            keep.append(x)
        dirs[:] = keep
        yield os.path.relpath(d, root), files


def index_tree(root):
    """Every file and folder of the source tree (relative paths), and every
    file name."""
    paths, names = set(), set()
    for rel, files in source_dirs(root):
        if rel != ".":
            paths.add(rel)
        for f in files:
            paths.add(os.path.normpath(os.path.join(rel, f)))
            names.add(f)
    return paths, names


def documents(root):
    docs = []
    for rel, files in source_dirs(root):
        for f in files:
            p = os.path.normpath(os.path.join(rel, f))
            if f == "README.md" or (p.startswith("docs" + os.sep) and f.endswith(".md")) \
                    or re.search(r"\.[1-8]$", f):
                docs.append(p)
    return sorted(docs)


def expand(tok):
    """`a.{h,cpp}` -> a.h, a.cpp; `a.h/.cpp` -> a.h, a.cpp."""
    m = re.match(r"^(.*)\{([^{}]*)\}(.*)$", tok)
    if m:
        out = []
        for alt in m.group(2).split(","):
            out += expand(m.group(1) + alt + m.group(3))
        return out
    m = re.match(r"^(.*?)(\.[A-Za-z0-9]+)((?:/\.[A-Za-z0-9]+)+)$", tok)
    if m:
        alts = [m.group(2)] + m.group(3).split("/")[1:]
        return [m.group(1) + ("." + a.lstrip(".")) for a in alts]
    return [tok]


USED = set()


def allowed(tok):
    for pat, _ in ALLOWED:
        if fnmatch.fnmatchcase(tok, pat):
            USED.add(pat)
            return True
    return False


class Checker:
    def __init__(self, root):
        self.root = root
        self.paths, self.names = index_tree(root)
        self.top = {p for p in self.paths if os.sep not in p}
        # Every proper tail of every path (`vnic/rx.h` of
        # `datapath/engine/vnic/rx.h`).
        self.tails = set()
        for p in self.paths:
            parts = p.split(os.sep)
            for i in range(1, len(parts)):
                self.tails.add(os.sep.join(parts[i:]))

    def exists(self, p):
        p = p.rstrip("/")
        if any(c in p for c in "*?"):
            return any(fnmatch.fnmatchcase(x, p) for x in self.paths)
        return p in self.paths

    def suffix_exists(self, p):
        p = p.rstrip("/")
        if any(c in p for c in "*?"):
            return any(fnmatch.fnmatchcase(x, "*/" + p) for x in self.paths)
        return p in self.tails

    def build_target(self, p):
        """`testbed/uroce-testbed`: an executable the meson.build of that
        folder defines (a path of the build tree, named as ninja takes it)."""
        d, name = os.path.split(p)
        mb = os.path.join(self.root, d, "meson.build")
        if not os.path.isfile(mb):
            return False
        with open(mb) as f:
            return re.search(r"executable\(\s*'" + re.escape(name) + "'", f.read()) is not None

    def name_exists(self, n):
        if any(c in n for c in "*?"):
            return any(fnmatch.fnmatchcase(x, n) for x in self.names)
        return n in self.names

    def classify(self, tok, rooted_only=False):
        """None when tok is not a repository path; else True/False: exists.
        rooted_only (an option's value in a code block, often an output
        file or a build folder): only paths from the root."""
        if not tok or tok.startswith(("/", "~", "-", "<")):
            return None
        if tok.startswith(".") and tok.split("/")[0] not in self.top:
            return None
        if any(c in tok for c in "<>") or "..." in tok or "@" in tok:
            return None
        parts = tok.rstrip("/").split("/")
        # A placeholder component: `ID.sh`, `ports/N/gids/I`, `RUN/x.sock`.
        if any(PLACEHOLDER.match(c.split(".")[0]) for c in parts):
            return None
        first = parts[0]
        if "/" in tok:
            if first in self.top:
                return self.exists(tok) or self.build_target(tok)
            if rooted_only:
                return None
            # Relative to some folder of the tree: only a file-like end
            # (`vnic/rx.h`); `rkey/bounds/` and `RX/TX` are prose.
            if not file_like(tok):
                return None
            if not re.match(r"^[a-z0-9_][a-z0-9_.\-*/]*$", tok):
                return None
            return self.suffix_exists(tok)
        if tok in self.top:
            return True
        if rooted_only:
            return None
        # A bare `name.*` is a test filter or a key family (`Cc.*`,
        # `parse_errors.*`), not a file.
        if EXT.search(tok) and re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.+\-*]*$", tok):
            # Version-like (`rdma-core.34`), a domain or a bare extension.
            if re.match(r"^[0-9.]+$", tok.split(".")[0] or "0"):
                return None
            return self.name_exists(tok)
        return None

    def tokens(self, doc, text):
        """(line, token, kind) for every candidate path of a document; kind
        is "link" (a Markdown link's target, relative to the document),
        "option" (an option's value in a code block) or "text"."""
        out = []
        base = os.path.dirname(doc)
        fenced = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            for m in LINK.finditer(line):
                target = m.group(1).split("#")[0]
                if not target or URL.match(target) or target.startswith(("mailto:", "/")):
                    continue
                out.append((n, os.path.normpath(os.path.join(base, target)), "link"))
            line = URL.sub(" ", LINK.sub("]", line))
            # `{a, b}`: one brace group, one token.
            line = re.sub(r"\{[^{}]*\}", lambda m: m.group(0).replace(" ", ""), line)
            prev = ""
            for m in TOKEN.finditer(line):
                tok = m.group(0)
                # In a code block, the value of a command's option (`--json
                # w34.json`, `--build-dir build-x`) is often an output: only
                # a path from the root is checked there.
                kind = "option" if fenced and prev.startswith("-") else "text"
                prev = tok
                # Lines and line ranges: `rc_responder.cpp:180/191`.
                tok = re.sub(r":[0-9][0-9/,\-]*$", "", tok)
                tok = tok.rstrip(".,;:)")
                # Markdown emphasis, not a glob: **bold**.
                tok = re.sub(r"^\*\*|\*\*$", "", tok).lstrip("(")
                if tok.startswith("./"):
                    tok = tok[2:]
                out.append((n, tok, kind))
        return out

    def check(self, doc):
        with open(os.path.join(self.root, doc), errors="replace") as f:
            text = f.read()
        missing = []
        for n, tok, kind in self.tokens(doc, text):
            # Plain words: no path (a bare top-level name always exists).
            if "/" not in tok and "." not in tok:
                continue
            for p in expand(tok):
                if allowed(p):
                    continue
                if kind == "link":
                    ok = self.exists(p)
                else:
                    ok = self.classify(p, rooted_only=kind == "option")
                if ok is False:
                    missing.append((n, p))
        return missing


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    checker = Checker(root)
    bad = 0
    docs = documents(root)
    for doc in docs:
        for n, p in checker.check(doc):
            print(f"{doc}:{n}: {p}: no such file in the tree")
            bad += 1
    for pat, _ in ALLOWED:
        if pat not in USED:
            print(f"check-doc-paths.py: allow-list entry {pat} matches no "
                  "path a document names: remove it")
            bad += 1
    if bad:
        print(f"check-doc-paths: {bad} missing path(s) in {len(docs)} document(s)")
        return 1
    print(f"check-doc-paths: {len(docs)} document(s), every path they name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
