#!/usr/bin/env python3
"""mutate.py: mutation testing for the harness's C sources (standard library only).

For each source file it enumerates single mutations, builds each mutant in a
scratch copy of the tree (never the real files) and runs the tests that cover
the file; a mutant the tests do not notice "survives" and points at a hole.

  scripts/mutate.py --list --files harness/check.c          enumerate only
  scripts/mutate.py --files harness/check.c harness/stats.c run them
  scripts/mutate.py --files harness/compare.c --max-mutants 150 --seed 1 --out /tmp/c.json
                                                            a reproducible sample
  scripts/mutate.py --files harness/compare.c --same-as /tmp/c.json
                                                            the same mutants again

Mutations (skipping comments, string and character literals, preprocessor
lines and __attribute__ lists):
  cmp     < <= > >= == !=: each relation to its boundary twin and its negation
          (< -> <= and >=, == -> !=, ...)
  arith   binary + - * / swapped (+ <-> -, * <-> /), += <-> -=, *= <-> /=,
          unary minus dropped
  const   an integer literal off by one (N+1, N-1; not array sizes in declarations)
  logic   && <-> ||
  negate  if (c) / while (c) -> if (!(c)) / while (!(c))
  delete  an expression statement (not a declaration, not `return value;`)
  return  return 0 <-> return -1

Outcomes: killed (a test failed), timeout (a test ran past --timeout: the suite
noticed, so it counts as killed), survived, invalid (the mutant does not build:
reported apart and left out of the score), equivalent (survived, but
scripts/mutate.json says no behaviour can tell it apart, and why).
score = (killed + timeout) / (killed + timeout + survived + equivalent); the
adjusted score leaves the equivalent ones out. Survivors of the normal build are
tried again in an ASan + UBSan build (as scripts/test.sh runs the suite); a kill
there counts, and is shown in the "by asan" column.

scripts/mutate.json holds the file -> CTest regex map ("tests"; a file not in it
runs every test; the tests run one by one, fastest first, up to the first
failure), the equivalent mutants ("equivalent": id -> file, line, why) and notes
on known survivors that are not equivalent ("notes", printed with them). Mutant
ids hash the file, the mutated line's text and the change, so they survive edits
elsewhere in the file; --list prints them. Mutants run in an order shuffled by
--seed, and --out is rewritten every ten, so a run stopped early (Ctrl-C ends
its builds and tests too) has tested a fair sample.
"""

import argparse
import csv
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("cmp", "arith", "const", "logic", "negate", "delete", "return")

# ---- tokens -------------------------------------------------------------------

PUNCT = sorted(
    """>>= <<= ... -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^= ##
    [ ] ( ) { } . & * + - ~ ! / % < > ^ | ? : ; = , #""".split(),
    key=len, reverse=True)
KEYWORDS = set("""auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed sizeof static
    struct switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool
    _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local bool __attribute__
    __typeof__ typeof __builtin_expect""".split())
TYPE_WORDS = set("""void char short int long float double signed unsigned _Bool bool const
    volatile static extern register auto struct union enum typedef inline _Thread_local
    _Atomic __attribute__ _Static_assert restrict _Noreturn _Alignas""".split())
STD_TYPES = set("""size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t
    int64_t uint8_t uint16_t uint32_t uint64_t FILE va_list pthread_t pthread_mutex_t
    pthread_cond_t pthread_attr_t atomic_int atomic_long atomic_bool sig_atomic_t off_t
    pid_t time_t clock_t mode_t DIR jmp_buf sigjmp_buf cJSON""".split())

TOKEN_RE = re.compile(
    r"""(?P<ws>\s+)
      | (?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
      | (?P<char>(?:[uUL])?'(?:\\.|[^'\\\n])*')
      | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
      | (?P<ident>[A-Za-z_]\w*)
      | (?P<punct>""" + "|".join(re.escape(p) for p in PUNCT) + r""")
      | (?P<other>.)""",
    re.X | re.S)


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line

    def __repr__(self):
        return "Tok(%s %r @%d)" % (self.kind, self.text, self.line)


def preprocessor_spans(text):
    """(start, end) character ranges of preprocessor lines, continuations included.
    A '#' starts one when it is the first non-blank character of a line that does
    not begin inside a comment (block comments are tracked roughly)."""
    spans = []
    pos, n, in_comment = 0, len(text), False
    while pos < n:
        eol = text.find("\n", pos)
        eol = n if eol < 0 else eol
        line = text[pos:eol]
        if not in_comment and line.lstrip().startswith("#"):
            start = pos
            while eol < n and text[pos:eol].rstrip().endswith("\\"):
                pos = eol + 1
                eol = text.find("\n", pos)
                eol = n if eol < 0 else eol
            spans.append((start, eol))
            pos = eol + 1
            continue
        # track /* ... */ across lines (ignoring those inside strings: good enough)
        stripped = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        stripped = re.sub(r"//.*", "", stripped)
        i = 0
        while True:
            if in_comment:
                j = stripped.find("*/", i)
                if j < 0:
                    break
                in_comment, i = False, j + 2
            else:
                j = stripped.find("/*", i)
                if j < 0:
                    break
                in_comment, i = True, j + 2
        pos = eol + 1
    return spans


def tokenize(text):
    """Code tokens of a C file: no whitespace, comments or preprocessor lines."""
    toks = []
    spans = preprocessor_spans(text)
    si = 0
    pos, line = 0, 1
    n = len(text)
    while pos < n:
        while si < len(spans) and spans[si][1] < pos:
            si += 1
        if si < len(spans) and spans[si][0] <= pos < spans[si][1]:
            end = spans[si][1]
            line += text.count("\n", pos, end)
            pos = end
            continue
        m = TOKEN_RE.match(text, pos)
        kind = m.lastgroup
        tok_text = m.group()
        if kind not in ("ws", "comment"):
            toks.append(Tok(kind, tok_text, pos, m.end(), line))
        line += tok_text.count("\n")
        pos = m.end()
    return toks


def typedef_names(paths):
    """Names declared by `typedef ...;` in the given files (for telling `T *p` from
    `a * b`)."""
    names = set(STD_TYPES)
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                toks = tokenize(f.read())
        except OSError:
            continue
        i = 0
        while i < len(toks):
            if toks[i].text != "typedef":
                i += 1
                continue
            depth, j = 0, i + 1
            while j < len(toks) and not (depth == 0 and toks[j].text == ";"):
                if toks[j].text in "({[":
                    depth += 1
                elif toks[j].text in ")}]":
                    depth -= 1
                j += 1
            body = toks[i + 1:j]
            name = None
            for k in range(len(body) - 2):  # function pointer: (*NAME)
                if body[k].text == "(" and body[k + 1].text == "*" and body[k + 2].kind == "ident":
                    name = body[k + 2].text
                    break
            if name is None:
                depth = 0
                for t in body:
                    if t.text in "({[":
                        depth += 1
                    elif t.text in ")}]":
                        depth -= 1
                    elif depth == 0 and t.kind == "ident":
                        name = t.text
            if name:
                names.add(name)
            i = j
    return names


# ---- mutants ------------------------------------------------------------------

class Mutant:
    __slots__ = ("file", "line", "kind", "start", "end", "repl", "desc", "id", "orig_line",
                 "mut_line", "status", "detail", "seconds", "why", "by")

    def to_dict(self):
        return {"id": self.id, "file": self.file, "line": self.line, "kind": self.kind,
                "desc": self.desc, "original": self.orig_line, "mutated": self.mut_line,
                "status": self.status, "by": self.by, "detail": self.detail, "seconds": self.seconds,
                "equivalent_because": self.why}


CMP_SWAPS = {"<": ("<=", ">="), "<=": ("<", ">"), ">": (">=", "<="), ">=": (">", "<"),
             "==": ("!=",), "!=": ("==",)}
ARITH_SWAPS = {"+": "-", "-": "+", "*": "/", "/": "*", "+=": "-=", "-=": "+=", "*=": "/=",
               "/=": "*="}
INT_RE = re.compile(r"^(0[xX][0-9a-fA-F]+|[1-9]\d*|0[0-7]*)([uUlL]*)$")


def is_operand_end(tok, prev, types, header_ends=frozenset()):
    """Whether tok ends an operand, so that an operator after it is binary."""
    if tok is None:
        return False
    if tok.kind in ("number", "string", "char"):
        return True
    if tok.text == ")" and tok.start in header_ends:
        return False  # `if (p) *p = 0;`: the operator starts the statement
    if tok.text in (")", "]", "++", "--"):
        return True
    if tok.kind == "ident":
        if tok.text in KEYWORDS or tok.text in types:
            return False
        if prev is not None and prev.text in ("struct", "union", "enum"):
            return False
        return True
    return False


def line_bounds(text, pos):
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, (len(text) if b < 0 else b)


def enumerate_mutants(relpath, text, types):
    toks = tokenize(text)
    out = []
    nt = len(toks)

    # regions to skip: __attribute__((...)), _Static_assert(...)
    skip = [False] * nt
    i = 0
    while i < nt:
        if toks[i].text in ("__attribute__", "_Static_assert", "_Alignas") and i + 1 < nt \
                and toks[i + 1].text == "(":
            depth, j = 0, i + 1
            while j < nt:
                if toks[j].text == "(":
                    depth += 1
                elif toks[j].text == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            for k in range(i, min(j + 1, nt)):
                skip[k] = True
            i = j + 1
            continue
        i += 1

    # statements: (first token, ';' token, is_declaration, in_function)
    statements = []
    decl_bracket = [False] * nt   # token inside [ ] of a declaration
    headers = {}                  # index of '(' of if/while -> index of matching ')'
    header_end_pos = set()        # offsets of the ')' closing control headers
    brace_stack = []              # 'block' or 'expr'
    paren_stack = []              # (index of '(', opener keyword or None)
    stmt_start = 0
    qdepth = 0                    # pending '?' at the statement level
    prev_close_header = False     # the last token closed an if/for/while/switch header

    def is_decl(a, b):
        t0 = toks[a]
        if t0.text in TYPE_WORDS:
            return True
        if t0.kind == "ident" and t0.text in types and a + 1 <= b and \
                (toks[a + 1].kind == "ident" or toks[a + 1].text == "*"):
            return True
        return False

    for i, t in enumerate(toks):
        in_expr_brace = bool(brace_stack) and brace_stack[-1] == "expr"
        closed_header = False
        if t.text == "(":
            opener = toks[i - 1].text if i > 0 else None
            paren_stack.append((i, opener))
        elif t.text == ")":
            if paren_stack:
                j, opener = paren_stack.pop()
                if opener in ("if", "while", "for", "switch") and not paren_stack:
                    closed_header = True
                    header_end_pos.add(t.start)
                    if opener in ("if", "while"):
                        headers[j] = i
        elif t.text == "{":
            prev = toks[i - 1] if i > 0 else None
            if paren_stack or in_expr_brace or (prev is not None and prev.text in ("=", ",", "(", "return")) \
                    or (prev is not None and prev.text == ")" and not prev_close_header and brace_stack):
                # an initialiser or compound literal (a function body at depth 0 and
                # a block after a control header are blocks)
                kind = "expr"
                if prev is not None and prev.text == ")" and not brace_stack:
                    kind = "block"
                brace_stack.append(kind)
            else:
                brace_stack.append("block")
                stmt_start = i + 1
                qdepth = 0
        elif t.text == "}":
            kind = brace_stack.pop() if brace_stack else "block"
            if kind == "block":
                stmt_start = i + 1
                qdepth = 0
        elif not paren_stack and not in_expr_brace:
            if t.text == "?":
                qdepth += 1
            elif t.text == ":":
                if qdepth:
                    qdepth -= 1
                else:
                    first = toks[stmt_start] if stmt_start < nt else None
                    if first is not None and (first.text in ("case", "default") or
                                              (i == stmt_start + 1 and first.kind == "ident")):
                        stmt_start = i + 1
            elif t.text == ";":
                a = stmt_start
                if a < i:
                    decl = is_decl(a, i)
                    statements.append((a, i, decl, bool(brace_stack)))
                    if decl:
                        depth = 0
                        for k in range(a, i):
                            if toks[k].text == "[":
                                depth += 1
                            elif toks[k].text == "]":
                                depth -= 1
                            elif depth > 0:
                                decl_bracket[k] = True
                stmt_start = i + 1
                qdepth = 0
            elif t.text in ("else", "do"):
                stmt_start = i + 1
        if closed_header:
            stmt_start = i + 1
            qdepth = 0
        prev_close_header = closed_header

    # file-scope tokens outside any function body: only declarations live there;
    # mark tokens inside function bodies
    in_func = [False] * nt
    depth = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        in_func[i] = depth > 0

    def add(kind, start, end, repl, desc, line):
        m = Mutant()
        m.file, m.kind, m.start, m.end, m.repl, m.desc, m.line = relpath, kind, start, end, repl, desc, line
        a, b = line_bounds(text, start)
        orig = text[a:b]
        m.orig_line = orig.strip()
        mutated = text[:start] + repl + text[end:]
        mb = mutated.find("\n", a)
        m.mut_line = mutated[a:(len(mutated) if mb < 0 else mb)].strip()
        col = start - a - (len(orig) - len(orig.lstrip()))
        key = "\0".join((relpath, kind, m.orig_line, str(col), text[start:end], repl))
        m.id = hashlib.sha1(key.encode()).hexdigest()[:10]
        m.status, m.detail, m.seconds, m.why, m.by = None, "", 0.0, "", ""
        out.append(m)

    for i, t in enumerate(toks):
        if skip[i]:
            continue
        prev = toks[i - 1] if i > 0 else None
        prev2 = toks[i - 2] if i > 1 else None
        nxt = toks[i + 1] if i + 1 < nt else None
        if t.kind == "punct":
            if t.text in CMP_SWAPS:
                for r in CMP_SWAPS[t.text]:
                    add("cmp", t.start, t.end, r, "%s -> %s" % (t.text, r), t.line)
            elif t.text in ("&&", "||"):
                r = "||" if t.text == "&&" else "&&"
                add("logic", t.start, t.end, r, "%s -> %s" % (t.text, r), t.line)
            elif t.text in ("+=", "-=", "*=", "/="):
                r = ARITH_SWAPS[t.text]
                add("arith", t.start, t.end, r, "%s -> %s" % (t.text, r), t.line)
            elif t.text in ("+", "-", "*", "/"):
                binary = is_operand_end(prev, prev2, types, header_end_pos)
                if binary:
                    r = ARITH_SWAPS[t.text]
                    add("arith", t.start, t.end, r, "%s -> %s" % (t.text, r), t.line)
                elif t.text == "-" and in_func[i] and not (prev is not None and prev.text == "return"
                                                           and nxt is not None and nxt.text == "1"):
                    add("arith", t.start, t.end, "", "unary - dropped", t.line)
        elif t.kind == "number" and not decl_bracket[i]:
            m = INT_RE.match(t.text)
            if m:
                digits, suffix = m.group(1), m.group(2)
                if digits[:2] in ("0x", "0X"):
                    v, fmt = int(digits, 16), lambda x, d=digits: d[:2] + format(x, "x")
                elif len(digits) > 1 and digits[0] == "0":
                    v, fmt = int(digits, 8), lambda x: "0" + format(x, "o")
                else:
                    v, fmt = int(digits), str
                ret0 = prev is not None and prev.text == "return" and v == 0
                for nv in (v + 1, v - 1):
                    if nv < 0:
                        continue
                    add("const", t.start, t.end, fmt(nv) + suffix, "%s -> %s" % (t.text, fmt(nv) + suffix),
                        t.line)
                if ret0 and nxt is not None and nxt.text == ";":
                    add("return", t.start, t.end, "-1", "return 0 -> return -1", t.line)
        elif t.text == "return" and nxt is not None and nxt.text == "-" and i + 3 < nt \
                and toks[i + 2].text == "1" and toks[i + 3].text == ";":
            add("return", nxt.start, toks[i + 2].end, "0", "return -1 -> return 0", t.line)

    for j, close in headers.items():
        kw = toks[j - 1].text
        a, b = toks[j].end, toks[close].start
        inner = text[a:b]
        add("negate", a, b, "!(" + inner + ")", "%s (c) -> %s (!(c))" % (kw, kw), toks[j].line)

    for a, b, decl, in_body in statements:
        if decl or not in_body or not in_func[a]:
            continue
        first = toks[a]
        if first.text in ("return", "typedef") and b > a + 1:
            continue
        if first.text == "(" and a + 2 < b and toks[a + 1].text == "void" and toks[a + 2].text == ")":
            continue  # (void)x; deleting it changes nothing
        if first.text in ("case", "default", "else", "do", "if", "for", "while", "switch"):
            continue
        if any(skip[k] for k in range(a, b + 1)):
            continue
        snippet = text[first.start:toks[b].end]
        short = " ".join(snippet.split())
        if len(short) > 60:
            short = short[:57] + "..."
        add("delete", first.start, toks[b].end, ";", "deleted: " + short, first.line)

    out.sort(key=lambda m: (m.start, KINDS.index(m.kind), m.repl))
    # the same id twice (identical lines, identical change) gets a suffix
    seen = {}
    for m in out:
        if m.id in seen:
            seen[m.id] += 1
            m.id = "%s.%d" % (m.id, seen[m.id])
        else:
            seen[m.id] = 0
    return out


def apply(text, m):
    return text[:m.start] + m.repl + text[m.end:]


# ---- the scratch tree -------------------------------------------------------------

def tree_files():
    r = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                       capture_output=True, check=True)
    return [f for f in r.stdout.decode().split("\0") if f and os.path.isfile(os.path.join(ROOT, f))]


def sync_tree(dst):
    """Copies the working tree (tracked and untracked-not-ignored files) into dst,
    writing only files whose content differs, so the build there stays incremental."""
    files = tree_files()
    for f in files:
        src_p, dst_p = os.path.join(ROOT, f), os.path.join(dst, f)
        with open(src_p, "rb") as fh:
            data = fh.read()
        try:
            with open(dst_p, "rb") as fh:
                same = fh.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst_p), exist_ok=True)
            with open(dst_p, "wb") as fh:
                fh.write(data)
            shutil.copymode(src_p, dst_p)


ACTIVE = set()  # process groups of the builds and tests running now


def run_cmd(cmd, cwd, timeout, log=None):
    """Runs cmd in its own process group; returns (rc or None on timeout, output)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    ACTIVE.add(p.pid)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return None, out.decode(errors="replace")
    finally:
        ACTIVE.discard(p.pid)


def stop_children(signum, frame):
    """Ctrl-C or kill: end the builds and tests this run started, then exit (the
    results file holds what was done; the scratch trees are resynced next run)."""
    for pgid in list(ACTIVE):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print("\nmutate: stopped", file=sys.stderr, flush=True)
    os._exit(128 + signum)


class Worker:
    def __init__(self, wid, scratch, args, sanitize=False):
        self.wid = wid
        self.sanitize = sanitize
        self.dir = os.path.join(scratch, "w%d%s" % (wid, "-asan" if sanitize else ""))
        self.src = os.path.join(self.dir, "src")
        self.build = os.path.join(self.dir, "build")
        self.args = args

    def prepare(self):
        os.makedirs(self.src, exist_ok=True)
        self.lock = open(os.path.join(self.dir, "lock"), "w")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit("mutate: %s is in use by another run; give this one its own --scratch" % self.dir)
        sync_tree(self.src)
        if not os.path.exists(os.path.join(self.build, "CMakeCache.txt")):
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            opts = ["-DCMAKE_BUILD_TYPE=Debug", "-DHN_SANITIZE=ON"] if self.sanitize else \
                ["-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
            rc, out = run_cmd(["cmake", "-S", self.src, "-B", self.build] + opts + gen, self.dir, 1800)
            if rc != 0:
                sys.exit("mutate: configuring the scratch build failed:\n" + out[-3000:])

    def tests_of(self, regex):
        rc, out = run_cmd(["ctest", "-N", "-R", regex], self.build, 120)
        names = re.findall(r"Test\s+#\d+: (\S+)", out)
        return names

    def targets_for(self, names):
        """The targets the tests need: each C test's program, and the harness
        binary when a script test or a C test that runs it is among them."""
        t, need_bin = [], False
        for n in names:
            c = os.path.join(self.src, "tests", n + ".c")
            if os.path.exists(c):
                t.append(n)
                with open(c, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                    need_bin |= "HARNESS_BIN" in text or "hn_test_run_harness" in text
            else:
                need_bin = True
        return (["harness"] if need_bin else []) + t

    def build_targets(self, targets):
        return run_cmd(["cmake", "--build", self.build, "-j", str(self.args.build_jobs), "--target"] + targets,
                       self.dir, self.args.build_timeout)

    def run_tests(self, names, timeouts):
        """Runs the tests one by one, fastest first, up to the first that fails."""
        for n in names:
            cmd = ["ctest", "-R", "^%s$" % re.escape(n), "--timeout", "%g" % timeouts[n], "--output-on-failure"]
            rc, out = run_cmd(cmd, self.build, timeouts[n] + 60)
            if rc is None or "***Timeout" in out:
                return "timeout", "%s timed out (%g s)" % (n, timeouts[n])
            if rc != 0:
                return "killed", tail_failure(out)
        return "survived", ""


def tail_failure(out):
    """The first failing test's name and first CHECK failure, for the report."""
    name = re.search(r"Test\s+#\d+: (\S+) \.*\s*\*+(\w+)", out)
    check = re.search(r"^.*(CHECK failed|failed:|error|Assertion|Sanitizer).*$", out, re.M)
    parts = []
    if name:
        parts.append("%s %s" % (name.group(1), name.group(2)))
    if check:
        parts.append(check.group(0).strip()[:160])
    return "; ".join(parts)


# ---- the run ------------------------------------------------------------------------

def load_config(path):
    if not path or not os.path.exists(path):
        return {"tests": {}, "equivalent": {}, "notes": {}}
    with open(path) as f:
        cfg = json.load(f)
    cfg.setdefault("tests", {})
    cfg.setdefault("equivalent", {})
    cfg.setdefault("notes", {})
    return cfg


def rel(path):
    p = os.path.relpath(os.path.abspath(path), ROOT)
    if p.startswith(".."):
        sys.exit("mutate: %s is outside the repository" % path)
    return p


def header_paths():
    out = []
    for d, _, files in os.walk(os.path.join(ROOT, "harness")):
        out += [os.path.join(d, f) for f in files if f.endswith(".h")]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--files", nargs="+", required=True, help="C sources to mutate (paths in the repository)")
    ap.add_argument("--tests", help="CTest regex for every file (default: scripts/mutate.json's map, "
                                    "else all tests)")
    ap.add_argument("--config", default=os.path.join(ROOT, "scripts", "mutate.json"),
                    help="test map and equivalent mutants (default scripts/mutate.json)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="mutation kinds to use (default all: %(default)s)")
    ap.add_argument("--max-mutants", type=int, default=0, help="at most N mutants per file, a random sample")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    ap.add_argument("--ids", nargs="+", help="only these mutant ids")
    ap.add_argument("--rerun", help="run again the mutants that survived in this results file (.json), "
                                    "e.g. after new tests; its other results are carried into the report")
    ap.add_argument("--same-as", help="the mutants of this results file (.json), e.g. to compare a sample "
                                      "before and after new tests")
    ap.add_argument("--jobs", type=int, default=1, help="mutants built and tested at once (one scratch tree each)")
    ap.add_argument("--build-jobs", type=int, default=1, help="make/ninja -j inside each job (default 1)")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds per test (default: 3x its unmutated run + 10)")
    ap.add_argument("--build-timeout", type=float, default=900, help="seconds per build (default 900)")
    ap.add_argument("--sanitize", choices=("survivors", "off"), default="survivors",
                    help="run the survivors again in an ASan + UBSan build, as scripts/test.sh does "
                         "(default survivors)")
    ap.add_argument("--list", action="store_true", help="only enumerate the mutants")
    ap.add_argument("--out", help="results file: .json or .csv")
    ap.add_argument("--scratch", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                       "hn-mutate-%d" % os.getuid()),
                    help="scratch folder for the copies of the tree and their builds (default %(default)s)")
    args = ap.parse_args()
    signal.signal(signal.SIGINT, stop_children)
    signal.signal(signal.SIGTERM, stop_children)

    kinds = set(args.kinds.split(","))
    bad = kinds - set(KINDS)
    if bad:
        sys.exit("mutate: unknown kind(s) %s (known: %s)" % (", ".join(sorted(bad)), ", ".join(KINDS)))
    cfg = load_config(args.config)
    types = typedef_names(header_paths() + [os.path.join(ROOT, f) for f in args.files])

    files = [rel(f) for f in args.files]
    per_file = {}
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        ms = [m for m in enumerate_mutants(f, text, types)
              if m.kind in kinds]
        if args.max_mutants and len(ms) > args.max_mutants and not (args.ids or args.rerun or args.same_as):
            rng = random.Random("%d:%s" % (args.seed, f))
            picked = set(id(m) for m in rng.sample(ms, args.max_mutants))
            ms = [m for m in ms if id(m) in picked]
        per_file[f] = (text, ms)

    wanted = None
    carried = {}  # id -> an earlier result kept as it was (--rerun)
    if args.ids:
        wanted = set(args.ids)
    if args.rerun:
        with open(args.rerun) as fh:
            prev = json.load(fh)
        wanted = (wanted or set()) | {r["id"] for r in prev["mutants"] if r["status"] in ("survived", "equivalent")}
        carried = {r["id"]: r for r in prev["mutants"] if r["id"] not in wanted and r["status"]}
    if args.same_as:
        with open(args.same_as) as fh:
            prev = json.load(fh)
        wanted = (wanted or set()) | {r["id"] for r in prev["mutants"]}
    if wanted is not None:
        for f in files:
            text, ms = per_file[f]
            keep = []
            for m in ms:
                if m.id in wanted:
                    keep.append(m)
                elif m.id in carried:
                    r = carried[m.id]
                    m.status, m.by, m.detail = r["status"], r.get("by", ""), r.get("detail", "")
                    m.seconds = r.get("seconds", 0.0)
                    keep.append(m)
            per_file[f] = (text, keep)

    equivalent = cfg.get("equivalent", {})
    # an annotation whose mutant no longer exists (its line changed) is stale
    all_ids = set()
    for f in files:
        all_ids |= {m.id for m in enumerate_mutants(f, per_file[f][0], types)}
    for i, e in sorted(equivalent.items()):
        if e.get("file") in files and i not in all_ids:
            print("mutate: warning: %s: equivalent mutant %s (line %s) no longer exists; update %s"
                  % (e["file"], i, e.get("line"), os.path.relpath(args.config)), file=sys.stderr)
    if args.list:
        for f in files:
            text, ms = per_file[f]
            counts = {}
            for m in ms:
                counts[m.kind] = counts.get(m.kind, 0) + 1
                note = "  [equivalent: %s]" % equivalent[m.id]["why"] if m.id in equivalent else ""
                print("%s  %s:%d  %-6s %-28s  %s%s" % (m.id, f, m.line, m.kind, m.desc[:28], m.mut_line, note))
            print("%s: %d mutants (%s)" % (f, len(ms), ", ".join("%s %d" % (k, counts[k])
                                                                 for k in KINDS if k in counts)))
        return 0

    regex_of = {}
    for f in files:
        regex_of[f] = args.tests or cfg["tests"].get(f) or "."
    todo = [m for f in files for m in per_file[f][1] if m.status is None]
    random.Random(args.seed).shuffle(todo)  # a run stopped early has tested a fair sample
    total = len(todo)
    print("mutate: %d mutants in %d file(s)%s, %d job(s); scratch %s" % (
        total, len(files), " (%d earlier results carried over)" % sum(
            1 for f in files for m in per_file[f][1] if m.status) if carried else "", args.jobs, args.scratch),
        flush=True)

    timeouts = {}
    phases = [("tests", False)]
    if args.sanitize != "off":
        phases.append(("sanitizer", True))
    for phase, sanitize in phases:
        if sanitize:
            todo = [m for m in todo if m.status in (None, "survived")]
            if not todo:
                break
            print("\nmutate: %d survivor(s) again, under ASan + UBSan" % len(todo), flush=True)
        run_phase(args, phase, sanitize, todo, per_file, regex_of, equivalent, timeouts,
                  lambda: write_results(files, per_file, args, timeouts) if args.out else None)
    report(files, per_file, equivalent, cfg["notes"], args, timeouts)
    return 0


def run_phase(args, phase, sanitize, todo, per_file, regex_of, equivalent, timeouts, save):
    """Builds and tests each mutant of todo in scratch trees (normal or sanitizer
    build); sets its status (a mutant killed here in the sanitizer phase is
    "killed" with by = "sanitizer")."""
    workers = [Worker(i, args.scratch, args, sanitize) for i in range(max(1, args.jobs))]
    for w in workers:
        w.prepare()

    # the unmutated tree must build and pass the tests it will be judged by
    w0 = workers[0]
    tests_of = {}
    for rx in sorted(set(regex_of.values())):
        names = w0.tests_of(rx)
        if not names:
            sys.exit("mutate: the regex %r selects no test" % rx)
        tests_of[rx] = names
    for w in workers:
        all_targets = sorted({t for rx in tests_of for t in w.targets_for(tests_of[rx])})
        rc, out = w.build_targets(all_targets)
        if rc != 0:
            sys.exit("mutate: the unmutated tree does not build (%s):\n%s" % (w.build, out[-3000:]))
    took = {}
    for rx, names in tests_of.items():
        for n in names:
            if n in took:
                continue
            t0 = time.time()
            rc, out = run_cmd(["ctest", "-R", "^%s$" % re.escape(n), "--output-on-failure"], w0.build, 3600)
            took[n] = time.time() - t0
            if rc != 0:
                sys.exit("mutate: %s fails on the unmutated tree (%s):\n%s" % (n, w0.build, out[-3000:]))
            print("mutate: baseline %s%s: %.1f s" % (n, " (sanitizer build)" if sanitize else "", took[n]),
                  flush=True)
        names.sort(key=lambda n: took[n])
    for n, t in took.items():
        timeouts[n + (" (sanitizer)" if sanitize else "")] = round(args.timeout or 3 * t + 10, 1)
    tmo = {n: timeouts[n + (" (sanitizer)" if sanitize else "")] for n in took}

    lock = threading.Lock()
    queue = list(todo)
    total = len(todo)
    done = [0]
    t_start = time.time()

    def work(w):
        while True:
            with lock:
                if not queue:
                    return
                m = queue.pop(0)
            text = per_file[m.file][0]
            path = os.path.join(w.src, m.file)
            names = tests_of[regex_of[m.file]]
            t0 = time.time()
            try:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(apply(text, m))
                rc, out = w.build_targets(w.targets_for(names))
                if rc != 0:
                    status = "invalid"
                    err = re.search(r"error: .*", out)
                    detail = (err.group(0) if err else ("build timed out" if rc is None else "build failed"))[:160]
                else:
                    status, detail = w.run_tests(names, tmo)
            finally:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            if not sanitize or status != "survived":
                m.status, m.detail, m.by = status, detail, phase
            m.seconds = round(m.seconds + time.time() - t0, 1)
            if m.status == "survived" and m.id in equivalent:
                m.status, m.why = "equivalent", equivalent[m.id]["why"]
            with lock:
                done[0] += 1
                if done[0] % 10 == 0:
                    save()
                if m.status in ("survived", "equivalent") or args.jobs == 1 or done[0] % 10 == 0:
                    eta = (time.time() - t_start) / done[0] * (total - done[0])
                    print("[%d/%d %s eta %.0f s] %-10s %s:%d %s: %s" % (
                        done[0], total, m.id, eta, m.status + (" (asan)" if sanitize and m.by == phase else ""),
                        m.file, m.line, m.kind, m.mut_line[:90]), flush=True)

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # leave the scratch builds matching the real tree
    for w in workers:
        sync_tree(w.src)


def counts_of(ms):
    c = {k: 0 for k in ("killed", "timeout", "survived", "invalid", "equivalent", "by_sanitizer")}
    for m in ms:
        if m.status is None:
            continue
        c[m.status] += 1
        c["by_sanitizer"] += m.status in ("killed", "timeout") and m.by == "sanitizer"
    return c


def write_results(files, per_file, args, timeouts):
    """The results file: every mutant so far (status null: not run yet)."""
    all_m = [m for f in files for m in per_file[f][1]]
    tmp = args.out + ".tmp"
    if args.out.endswith(".csv"):
        with open(tmp, "w", newline="") as fh:
            wr = csv.writer(fh)
            keys = list(all_m[0].to_dict()) if all_m else ["id"]
            wr.writerow(keys)
            for m in all_m:
                d = m.to_dict()
                wr.writerow([d[k] for k in keys])
    else:
        summary = {}
        for f in files:
            c = counts_of(per_file[f][1])
            summary[f] = dict(c, score=round(score_of(c, False), 2), adjusted=round(score_of(c, True), 2))
        with open(tmp, "w") as fh:
            json.dump({"seed": args.seed, "max_mutants": args.max_mutants, "timeouts_s": timeouts,
                       "files": summary, "mutants": [m.to_dict() for m in all_m]}, fh, indent=1)
    os.replace(tmp, args.out)


def score_of(c, adjusted):
    det = c["killed"] + c["timeout"]
    den = det + c["survived"] + (0 if adjusted else c["equivalent"])
    return 100.0 * det / den if den else float("nan")


def report(files, per_file, equivalent, notes, args, timeouts):
    rows = []
    print("\nmutation score per file: (killed + timeout) / (killed + timeout + survived + equivalent);\n"
          "adjusted leaves the equivalent ones out too; invalid mutants (they do not build) never count;\n"
          "'by asan' of the killed: only the ASan + UBSan build's tests noticed")
    print("  %-26s %7s %7s %7s %7s %8s %7s %10s %7s %9s" % (
        "file", "mutants", "killed", "by asan", "timeout", "survived", "invalid", "equivalent", "score",
        "adjusted"))
    for f in files:
        ms = per_file[f][1]
        c = counts_of(ms)
        print("  %-26s %7d %7d %7d %7d %8d %7d %10d %6.1f%% %8.1f%%" % (
            f, len(ms), c["killed"], c["by_sanitizer"], c["timeout"], c["survived"], c["invalid"],
            c["equivalent"], score_of(c, False), score_of(c, True)))
        rows.append((f, c))
    surv = [m for f in files for m in per_file[f][1] if m.status in ("survived", "equivalent")]
    if surv:
        print("\nsurvivors:")
        for m in surv:
            tag = "equivalent: " + m.why if m.status == "equivalent" else "SURVIVED"
            if m.status == "survived" and m.id in notes:
                tag += " (known: %s)" % notes[m.id]["why"]
            print("  %s:%d [%s] %s: %s\n      %s\n      -> %s" % (m.file, m.line, m.id, m.kind, tag,
                                                                  m.orig_line, m.mut_line))
    if args.out:
        write_results(files, per_file, args, timeouts)
        print("\nresults: %s" % args.out)


if __name__ == "__main__":
    sys.exit(main())
