#!/usr/bin/python3
"""`meson install` into a temporary DESTDIR, and what it put there.

    test_install.py BUILD_DIR SOURCE_DIR UROCED UROCE_CTL

Checks, in order:
  1. the installed files are exactly the expected list (below), every
     symlink resolves inside DESTDIR, and the provider's .driver file names
     the provider;
  2. the installed uroce-run names files that were installed;
  3. uroce_dv.pc and the header: a C program calling uroce_dv_is_supported
     compiles and links against DESTDIR with `pkg-config uroce_dv`;
  4. every man page renders without a warning (groff -man -ww, as man and
     lintian run it) and through `man -l`;
  5. uroced(8) lists every configuration key the parser knows, set by set
     in the tables' order (`uroce-ctl keys`), and exactly uroced's options
     (`uroced --help`); uroce-ctl(8) exactly uroce-ctl's commands and
     options; uroce_dv(3) every uroce_dv_* call of the header;
     uroce_dc_pingpong(1) every option of both examples' getopt strings.
Exit 0 when all hold, 1 otherwise (each failure printed).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

build, source, uroced, ctl = sys.argv[1:5]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


opts = {o["name"]: o["value"]
        for o in json.loads(run(["meson", "introspect", "--buildoptions", build]).stdout)}
prefix = opts["prefix"]


def d(name, *rest):
    """An install directory (absolute, as meson resolves it), plus rest."""
    return os.path.join(prefix, opts[name], *rest)


lib = d("libdir")
expected_files = {
    d("sbindir", "uroced"),
    d("bindir", "uroce-ctl"),
    d("bindir", "uroce-run"),
    d("bindir", "uroce_dc_pingpong"),
    d("bindir", "uroce_dc_bench"),
    os.path.join(lib, "liburoce.so.1.0.0"),
    os.path.join(lib, "uroce", "liburoce-preload.so"),
    os.path.join(lib, "uroce", "liburoce-engine.so"),
    os.path.join(lib, "pkgconfig", "uroce_dv.pc"),
    d("libexecdir", "uroce", "uroce-embedded"),
    d("includedir", "infiniband", "uroce_dv.h"),
    d("sysconfdir", "libibverbs.d", "uroce.driver"),
    d("datadir", "doc", "uroce", "uroced.example.toml"),
    d("mandir", "man8", "uroced.8"),
    d("mandir", "man8", "uroce-ctl.8"),
    d("mandir", "man1", "uroce-run.1"),
    d("mandir", "man3", "uroce_dv.3"),
    d("mandir", "man1", "uroce_dc_pingpong.1"),
    d("mandir", "man1", "uroce_dc_bench.1"),
    d("sysconfdir", "uroce", "uroced.toml"),
    os.path.join(prefix, "lib", "tmpfiles.d", "uroce.conf"),
    # systemd's own directory when the prefix is /usr (systemd.pc), else
    # under the prefix; or the systemdunitdir option.
    os.path.join(opts["systemdunitdir"] or
                 ("/lib/systemd/system" if prefix == "/usr" else
                  os.path.join(prefix, "lib", "systemd", "system")), "uroced.service"),
} | {d("datadir", "doc", "uroce", "examples", f)
     for f in ("dc_pingpong.cpp", "dc_bench.cpp", "dc_common.h", "oob.h")}
# symlink -> its target as installed
expected_links = {
    os.path.join(lib, "liburoce.so"): "liburoce.so.1",
    os.path.join(lib, "liburoce.so.1"): "liburoce.so.1.0.0",
    os.path.join(lib, "libibverbs", "liburoce-rdmav34.so"): "../liburoce.so.1",
}

dest = tempfile.mkdtemp(prefix="uroce-install.")
try:
    r = run(["meson", "install", "-C", build, "--no-rebuild", "--destdir", dest])
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        fail("meson install exited %d" % r.returncode)
        sys.exit(1)

    # 1. The list.
    files, links = set(), {}
    for root, dirs, names in os.walk(dest):
        for n in names + [x for x in dirs if os.path.islink(os.path.join(root, x))]:
            p = os.path.join(root, n)
            rel = "/" + os.path.relpath(p, dest)
            if os.path.islink(p):
                links[rel] = os.readlink(p)
                if not os.path.exists(p):
                    fail("%s -> %s does not resolve" % (rel, links[rel]))
            else:
                files.add(rel)
    for p in sorted(expected_files - files):
        fail("not installed: " + p)
    for p in sorted(files - expected_files):
        fail("installed but not expected: " + p)
    for p, t in sorted(expected_links.items()):
        if links.get(p) != t:
            fail("%s should link to %s, is %s" % (p, t, links.get(p)))
    for p in sorted(set(links) - set(expected_links)):
        fail("unexpected symlink: %s -> %s" % (p, links[p]))
    for p in (d("sbindir", "uroced"), d("bindir", "uroce-ctl"), d("bindir", "uroce-run"),
              d("libexecdir", "uroce", "uroce-embedded")):
        if os.path.exists(dest + p) and not os.access(dest + p, os.X_OK):
            fail(p + " is not executable")
    drv = dest + d("sysconfdir", "libibverbs.d", "uroce.driver")
    if os.path.exists(drv) and open(drv).read().strip() != "driver uroce":
        fail("uroce.driver does not say 'driver uroce'")
    print("installed: %d files, %d symlinks" % (len(files), len(links)))

    # 2. uroce-run's paths.
    run_script = dest + d("bindir", "uroce-run")
    if os.path.exists(run_script):
        text = open(run_script).read()
        named = set(re.findall(r"^(?:provider|preload)=(\S+)$", text, re.M))
        named |= set(re.findall(r"(/\S+?(?:\.so|uroce-embedded))\b", text))
        if not named:
            fail("uroce-run names no installed file")
        for p in sorted(named):
            if not os.path.lexists(dest + p):
                fail("uroce-run names %s, which is not installed" % p)

    # 3. pkg-config and the header, as a program that uses them would.
    env = dict(os.environ, PKG_CONFIG_PATH=dest + os.path.join(lib, "pkgconfig"),
               PKG_CONFIG_SYSROOT_DIR=dest)
    pc = run(["pkg-config", "--cflags", "--libs", "uroce_dv"], env=env)
    if pc.returncode != 0:
        fail("pkg-config uroce_dv: " + pc.stderr.strip())
    else:
        if "-luroce" not in pc.stdout.split() or "-libverbs" not in pc.stdout.split():
            fail("pkg-config uroce_dv --libs lacks -luroce or -libverbs: " + pc.stdout.strip())
        src = os.path.join(dest, "probe.c")
        with open(src, "w") as f:
            f.write("#include <infiniband/uroce_dv.h>\n"
                    "int main(void) { return uroce_dv_is_supported(0) ? 1 : 0; }\n")
        cc = run(["cc", "-Wall", "-Werror", "-o", os.path.join(dest, "probe"), src]
                 + pc.stdout.split(), env=env)
        if cc.returncode != 0:
            fail("a program with uroce_dv.h does not build: " + cc.stderr.strip()[-2000:])
        else:
            print("pkg-config uroce_dv: " + pc.stdout.strip().replace(dest, "$DESTDIR"))

    # 4. The man pages render without warnings.
    pages = {}
    bench = dest + d("mandir", "man1", "uroce_dc_bench.1")
    if os.path.exists(bench) and open(bench).read().strip() != ".so man1/uroce_dc_pingpong.1":
        fail("uroce_dc_bench.1 is not a .so of uroce_dc_pingpong.1")
    for sec, name in (("8", "uroced"), ("8", "uroce-ctl"), ("1", "uroce-run"),
                      ("3", "uroce_dv"), ("1", "uroce_dc_pingpong")):
        page = dest + d("mandir", "man" + sec, name + "." + sec)
        if not os.path.exists(page):
            continue
        g = run(["groff", "-man", "-Tutf8", "-ww", "-z", page])
        if g.returncode != 0 or g.stderr.strip():
            fail("%s(%s): groff warns: %s" % (name, sec, g.stderr.strip()))
        m = run(["man", "-P", "cat", "-l", page], env=dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8"))
        if m.returncode != 0 or m.stderr.strip() or "NAME" not in m.stdout:
            fail("%s(%s): man -l fails: %s" % (name, sec, m.stderr.strip()))
        # Overstruck output: bold is c\bc, italics _\bc.
        g = run(["groff", "-man", "-Tutf8", "-P-c", "-rLL=200n", page],
                env=dict(os.environ, LC_ALL="C.UTF-8"))
        lines = []
        for raw in g.stdout.splitlines():
            text, bold, i = "", [], 0
            while i < len(raw):
                if i + 2 < len(raw) and raw[i + 1] == "\b":
                    text += raw[i + 2]
                    bold.append(raw[i] == raw[i + 2])
                    i += 3
                else:
                    text += raw[i]
                    bold.append(False)
                    i += 1
            lines.append((text, bold))
        pages[name] = lines
        print("%s(%s): %d lines, no warnings" % (name, sec, len(lines)))

    def section(lines, title):
        """The lines of section `title` (a heading at column 0)."""
        out, inside = [], False
        for text, bold in lines:
            if text and not text[0].isspace():
                inside = text.strip() == title
                continue
            if inside:
                out.append((text, bold))
        return out

    def bold_runs(text, bold):
        """The bold words of a line, in order."""
        return re.findall(r"\S+", "".join(c if b else " " for c, b in zip(text, bold)))

    def tags(lines):
        """The bold words of each tag of a tagged paragraph (bold at column 7)."""
        return [bold_runs(text, bold) for text, bold in lines
                if len(text) > 7 and text[:7] == " " * 7 and text[7] != " " and bold[7]]

    # 5. The lists.
    if "uroced" in pages:
        keys = run([ctl, "keys"]).stdout
        want, cur = [], None
        for line in keys.splitlines():
            if line and not line[0].isspace():
                cur = (re.sub(r" \([^)]*\)$", "", line.strip()), [])
                want.append(cur)
            elif re.match(r"^  \S", line) and cur is not None:
                cur[1].append(line.split()[0])
        got, cur = [], None
        for text, bold in section(pages["uroced"], "CONFIGURATION KEYS"):
            if text.startswith("   ") and not text.startswith("    ") and bold[3]:
                cur = (text.strip(), [])
                got.append(cur)
            elif cur is not None and len(text) > 7 and text[:7] == " " * 7 and text[7] != " " \
                    and bold[7]:
                cur[1].append(bold_runs(text, bold)[0])
        nkeys = sum(len(k) for _, k in want)
        if not want or nkeys < 20:
            fail("uroce-ctl keys listed only %d keys" % nkeys)
        if [t for t, _ in got] != [t for t, _ in want]:
            fail("uroced(8) key sets %s != uroce-ctl keys' %s"
                 % ([t for t, _ in got], [t for t, _ in want]))
        for (t, w), (_, g2) in zip(want, got):
            if w != g2:
                fail("uroced(8) %s: keys %s != the parser's %s" % (t, g2, w))
        print("uroced(8): %d key sets, %d keys, as uroce-ctl keys" % (len(got),
                                                                     sum(len(k) for _, k in got)))
        helptext = run([uroced, "--help"]).stdout
        want_opts = sorted(set(re.findall(r"^\s+(?:-\w,\s?)?(--[\w-]+)", helptext, re.M)))
        got_opts = sorted({o for t in tags(section(pages["uroced"], "OPTIONS"))
                           for o in t if o.startswith("--")})
        if not want_opts or got_opts != want_opts:
            fail("uroced(8) options %s != uroced --help's %s" % (got_opts, want_opts))
        else:
            print("uroced(8): options %s" % " ".join(got_opts))
    if "uroce-ctl" in pages:
        helptext = run([ctl, "--help"]).stdout
        m = re.search(r"\{([\w,]+)\}", helptext)
        want_cmds = m.group(1).split(",") if m else []
        got_cmds = [t[0] for t in tags(section(pages["uroce-ctl"], "COMMANDS"))]
        if not want_cmds or got_cmds != want_cmds:
            fail("uroce-ctl(8) commands %s != uroce-ctl --help's %s" % (got_cmds, want_cmds))
        want_opts = sorted(set(re.findall(r"^\s+(?:-\w,\s?)?(--[\w-]+)", helptext, re.M)))
        got_opts = sorted({o for t in tags(section(pages["uroce-ctl"], "OPTIONS"))
                           for o in t if o.startswith("--")})
        if not want_opts or got_opts != want_opts:
            fail("uroce-ctl(8) options %s != uroce-ctl --help's %s" % (got_opts, want_opts))
        else:
            print("uroce-ctl(8): commands %s; options %s" % (" ".join(got_cmds),
                                                             " ".join(got_opts)))
    if "uroce_dv" in pages:
        header = open(os.path.join(source, "verbs-provider", "include", "infiniband",
                                   "uroce_dv.h")).read()
        calls = sorted(set(re.findall(r"\b(uroce_dv_\w+)\s*\(", header)))
        text = "\n".join(t for t, _ in pages["uroce_dv"])
        missing = [c for c in calls if c not in text]
        if missing:
            fail("uroce_dv(3) does not describe " + ", ".join(missing))
        else:
            print("uroce_dv(3): all %d calls of the header" % len(calls))
    if "uroce_dc_pingpong" in pages:
        text = "\n".join(t for t, _ in pages["uroce_dc_pingpong"])
        for src in ("dc_pingpong.cpp", "dc_bench.cpp"):
            code = open(os.path.join(source, "apps", "examples", src)).read()
            m = re.search(r'getopt(?:_long)?\(argc, argv, "([^"]+)"', code)
            letters = [c for c in (m.group(1) if m else "") if c not in ":h"]
            longs = re.findall(r'\{"([\w-]+)", (?:no|required)_argument', code)
            missing = [o for o in ["-" + c for c in letters] + ["--" + x for x in longs]
                       if not re.search(r"(^|[\s\[])" + re.escape(o) + r"\b", text, re.M)]
            if not letters or missing:
                fail("uroce_dc_pingpong(1) lacks %s's options %s" % (src, missing or "(none)"))
        print("uroce_dc_pingpong(1): every option of both examples")
finally:
    shutil.rmtree(dest, ignore_errors=True)

sys.exit(1 if failures else 0)
