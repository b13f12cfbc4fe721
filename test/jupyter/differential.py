"""Differential test of codeinterp against Debian's ipykernel.

Runs every notebook of the corpus (corpus.py: real notebook code from
Debian's documentation packages) cell by cell in a fresh Jupyter kernel
(jupyter_client's KernelManager, the python3 kernel of /usr/bin/python3)
and in a fresh codeinterp session (the Python binding, on the library of
a build tree), and compares each cell: status and exception name, stdout,
the execute_result's text/plain against the session's value, and the
kinds and MIME types of the rich outputs. Prints every mismatch, sorted
into categories, and the match rate:

    /usr/bin/python3 test/jupyter/differential.py [BUILD] [--fast]
        [--notebook NAME]... [--list] [--json FILE] [--min-rate P]
        [--timeout S] [--quiet]

BUILD (default $BUILD, else "build") is the build tree holding
libcodeinterp.so.0. A cell that codeinterp refuses with its sandbox
policy message ("in this sandbox") is "refused by design", and left out
of the rate, when what the cell does is something the sandbox forbids (a
shell command, a subprocess, the network).

Not differences, so normalised away before comparing: memory addresses,
timings (%timeit, %time, %prun's rows), the two working directories and
the cells' file names (/tmp/ipykernel_*/N.py, <cell N>), temporary paths,
timestamps near now, pandas Styler's random table ids, terminal colours,
trailing blanks, the order of a set's elements (the two processes' hash
seeds differ), the order of a cell's output messages (Result.value has
no place among them), and a line more or less at either end of the
stdout of a cell that sleeps. Each mismatch is put in a category by the
first of CATEGORY_RULES that fits, with who is at fault: codeinterp (it
differs from Jupyter), cascade (it follows from an earlier mismatch),
design (it follows from a refusal), harness (timing), unsorted.

No network: the kernel talks to this process over Unix sockets (ZeroMQ's
ipc transport) and, where unshare(1) can do it (as root), runs in a
network namespace of its own with only a loopback device; cells that
would fetch a URL are skipped by the corpus anyway. The kernel runs in a
temporary directory, with Jupyter's and IPython's configuration, runtime
and data directories there too, so nothing of the user's changes it;
everything is removed at the end.
"""
import argparse
import datetime
import importlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True       # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import corpus  # noqa: E402  (beside this file)

CELL_TIMEOUT = 30.0
# Run before each notebook on both sides and not compared: the same seed,
# so that pages calling np.random without one print the same numbers.
# Through __import__, so the notebook's namespace gets no new names.
SEED_CELL = "__import__('numpy').random.seed(12345); __import__('random').seed(12345)"
POLICY = re.compile(r"(disabled )?in this sandbox")


# -------------------------------------------------------------- outcomes

@dataclass
class Outcome:
    """What one side did with one cell, in the same terms for both."""

    status: str = "ok"              # ok, error, timeout, died
    ename: Optional[str] = None
    evalue: Optional[str] = None
    stdout: str = ""
    stderr: str = ""
    value: Optional[str] = None     # execute_result's text/plain
    # [type, [mimes], text/plain's first 80 characters]: the text is for
    # sorting mismatches into categories, not compared.
    outputs: List[list] = field(default_factory=list)
    page: str = ""                  # Jupyter's pager text (obj?, %prun)
    seconds: float = 0.0
    note: Optional[str] = None      # restarts, truncation

    def kinds(self):
        """The outputs as a sorted list: the order of a figure and an
        execute_result is not compared, as codeinterp's Result.value has no
        place among the messages."""
        return sorted((o[0], tuple(o[1])) for o in self.outputs if o[0] != "page")

    def texts(self, otype):
        return [o[2] for o in self.outputs if o[0] == otype]


# ---------------------------------------------------------- Jupyter side

def isolate_jupyter(tmp):
    """Points this process's jupyter_client, and the kernels it starts, at
    configuration, runtime and data directories in tmp only (so that the
    kernelspec found is write_kernelspec's, and no user's config applies)."""
    for k in [k for k in os.environ if k.startswith(("MPL", "JUPYTER", "IPYTHON"))]:
        del os.environ[k]
    os.environ.update(kernel_env(tmp))


def kernel_env(tmp):
    """The kernel's environment: Jupyter, IPython and matplotlib look for
    their configuration in tmp only, and no MPLBACKEND of ours overrides
    the inline backend a notebook has."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "JUPYTER", "IPYTHON"))}
    env.update({
        "PATH": "/usr/bin:/bin",
        "JUPYTER_RUNTIME_DIR": os.path.join(tmp, "runtime"),
        "JUPYTER_CONFIG_DIR": os.path.join(tmp, "config"),
        "JUPYTER_DATA_DIR": os.path.join(tmp, "data"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": os.path.join(tmp, "ipython"),
        "MPLCONFIGDIR": os.path.join(tmp, "mpl"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    })
    return env


def can_unshare_net():
    try:
        return subprocess.run(["unshare", "--net", "--", "true"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def write_kernelspec(tmp, isolate):
    """A "python3" kernelspec in the temporary data directory, which
    jupyter_client prefers to the one ipykernel ships: the same command,
    /usr/bin/python3 -m ipykernel_launcher, behind unshare --net when
    isolate."""
    argv = ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if isolate:
        argv = ["unshare", "--net", "--"] + argv
    d = os.path.join(tmp, "data", "kernels", "python3")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "kernel.json"), "w") as f:
        json.dump({"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python",
                   "metadata": {"debugger": False}}, f)


def code_of(msg):
    return msg.get("parent_header", {}).get("msg_id", "?")


class JupyterSide:
    """One ipykernel, started in workdir, and a blocking client."""

    def __init__(self, tmp, workdir, isolated):
        self.tmp, self.workdir, self.isolated = tmp, workdir, isolated
        self.km = self.kc = None
        self.start()

    def check_isolation(self):
        """The kernel must be in another network namespace when one was
        asked for: a kernelspec other than ours would quietly not be."""
        pid = self.km.provisioner.process.pid
        theirs = os.readlink(f"/proc/{pid}/ns/net")
        if theirs == os.readlink("/proc/self/ns/net"):
            self.close()
            raise RuntimeError(f"kernel pid {pid} shares this host's network namespace; "
                               "not running notebooks in it")

    def start(self):
        from jupyter_client import KernelManager
        n = len(os.listdir(os.path.join(self.tmp, "runtime"))) if os.path.isdir(
            os.path.join(self.tmp, "runtime")) else 0
        self.km = KernelManager(kernel_name="python3", transport="ipc",
                                ip=os.path.join(self.tmp, f"ipc{n}"),
                                connection_file=os.path.join(self.tmp, f"kernel{n}.json"))
        with open(os.path.join(self.tmp, "kernel.log"), "ab") as log:
            self.km.start_kernel(cwd=self.workdir, env=kernel_env(self.tmp), stderr=log)
        if self.isolated:
            self.check_isolation()
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def close(self):
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None and self.km.has_kernel:
            self.km.shutdown_kernel(now=True)
            self.km.cleanup_resources()
        self.km = self.kc = None

    def restart(self):
        self.close()
        self.start()

    def run(self, code, timeout):
        t0 = time.monotonic()
        # stop_on_error=False: else, after a cell that raised, the kernel
        # answers the requests that come in the next moments "aborted"
        # without running them, as a notebook's Run All stops at an error.
        msg_id = self.kc.execute(code, allow_stdin=False, store_history=True,
                                 stop_on_error=False)
        out = Outcome()
        if not self._collect(msg_id, out, t0 + timeout):
            out.status = "timeout"
            self._interrupt(msg_id, out)
        elif out.status != "died":
            self._reply(msg_id, out, t0 + timeout + 10)
        out.seconds = time.monotonic() - t0
        return out

    def _collect(self, msg_id, out, deadline):
        """Reads iopub until the kernel is idle again: False at deadline."""
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
            except queue.Empty:
                if not self.km.is_alive():
                    out.status, out.note = "died", "the kernel died"
                    return True
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if self._iopub(msg, out):
                return True
        return False

    @staticmethod
    def _iopub(msg, out):
        """Takes one iopub message into out; True when it is the idle."""
        t, c = msg["msg_type"], msg["content"]
        if t == "stream":
            if c["name"] == "stdout":
                out.stdout += c["text"]
            else:
                out.stderr += c["text"]
        elif t in ("display_data", "execute_result"):
            out.outputs.append([t, sorted(c["data"]), c["data"].get("text/plain", "")[:80]])
            if t == "execute_result":
                out.value = c["data"].get("text/plain")
        elif t == "clear_output":
            # What a notebook shows after it: nothing of before.
            out.outputs, out.stdout, out.value = [], "", None
        elif t == "error":
            out.status, out.ename, out.evalue = "error", c["ename"], c["evalue"]
        return t == "status" and c["execution_state"] == "idle"

    def _reply(self, msg_id, out, deadline):
        """The execute_reply: its status, and a help page (obj?, %prun)
        that a notebook shows in its pager, kept as page (its text) and as
        an output of type page (listed, not compared: see compare())."""
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_shell_msg(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            c = msg["content"]
            if c["status"] == "error" and out.status == "ok":
                out.status, out.ename, out.evalue = "error", c.get("ename"), c.get("evalue")
            elif c["status"] not in ("ok", "error"):
                raise RuntimeError(f"the kernel answered {c['status']!r} to a cell: {code_of(msg)}")
            for p in c.get("payload", []):
                if p.get("source") == "page":
                    out.outputs.append(["page", sorted(p.get("data", {})), ""])
                    out.page += p.get("data", {}).get("text/plain", "")
            return
        out.note = "no execute_reply within 10 s of the kernel going idle"

    def _interrupt(self, msg_id, out):
        """After a timeout: SIGINT, as a notebook's stop button; a kernel
        still busy 10 s later is restarted (its state is lost)."""
        self.km.interrupt_kernel()
        scratch = Outcome()
        if self._collect(msg_id, scratch, time.monotonic() + 10):
            self._reply(msg_id, scratch, time.monotonic() + 5)
            out.note = "interrupted at the timeout"
        else:
            self.restart()
            out.note = "restarted after the timeout: later cells run in a fresh kernel"


# ------------------------------------------------------- codeinterp side

class CodeinterpSide:
    """One codeinterp session with the notebook's files in its workspace."""

    def __init__(self, files, timeout):
        import codeinterp
        self.ci = codeinterp
        self.files = files
        self.timeout = timeout
        self.s = codeinterp.Session(timeout_ms=int(timeout * 1000))
        self.put_files()

    def put_files(self):
        # put_file() makes no directories; a cell does, through __import__
        # so the notebook's namespace gets no os.
        dirs = sorted({os.path.dirname(n) for n in self.files if os.path.dirname(n)})
        if dirs:
            self.s.run("for d in %r: __import__('os').makedirs(d, exist_ok=True)" % dirs)
        for name, data in self.files.items():
            self.s.put_file(name, data)

    @property
    def workspace(self):
        return self.s.workspace

    def restart(self):
        self.s.restart()

    def close(self):
        self.s.close()

    def run(self, code, timeout):
        st = self.ci.Status
        t0 = time.monotonic()
        try:
            r = self.s.run(code, timeout_ms=int(timeout * 1000))
        except self.ci.CodeinterpError as e:
            # A refused call, not a cell's result (a binding and library
            # out of step while a build is being made, a dead session).
            out = Outcome(status="died", ename=e.name, evalue=str(e),
                          note="Session.run() raised %s; session restarted" % e.name)
            self.restart()
            return out
        out = Outcome(stdout=r.stdout, stderr=r.stderr, value=r.value,
                      outputs=self.messages(r), seconds=time.monotonic() - t0)
        if r.status == st.ERROR or r.status == st.MEMORY:
            out.status = "error"
            out.ename, out.evalue = (r.error.name, r.error.value) if r.error else ("MemoryError", "")
        elif r.status in (st.TIMEOUT, st.INTERRUPTED):
            out.status = "timeout"
        elif r.status == st.KILLED:
            out.status, out.note = "died", "the worker died; restarted: later cells run fresh"
            out.ename, out.evalue = (r.error.name, r.error.value) if r.error else (None, None)
            self.restart()
        if r.truncated:
            out.note = (out.note or "") + " truncated %r" % r.truncated
        return out

    @staticmethod
    def messages(r):
        """The outputs as Jupyter's messages: one [type, mimes] per message.

        The binding gives an execute_result's text/plain as Result.value,
        not always as an output: it is put back in, so that a DataFrame is
        execute_result [text/html, text/plain] on both sides."""
        msgs = {}
        for o in r.outputs:
            msg = msgs.setdefault(o.message, [o.type, set(), ""])
            msg[1].add(o.mime)
            if o.mime == "text/plain":
                msg[2] = o.text[:80]
        out = [msgs[k] for k in sorted(msgs)]
        if r.value is not None:
            results = [m for m in out if m[0] == "execute_result"]
            if not results:
                results = [["execute_result", set(), ""]]
                out += results
            results[-1][1].add("text/plain")
            results[-1][2] = r.value[:80]
        return [[t, sorted(m), text] for t, m, text in out]


# ---------------------------------------------------------- normalising

_ADDR = re.compile(r"0x[0-9a-fA-F]{6,16}")
_TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|min|seconds)\b")
_LOOPS = re.compile(r"\b[\d,]+ (loops? each|runs?)\b")
_TMP = re.compile(r"/tmp/[\w.+-]+(?:/[\w.+-]+)*")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A cell's code object is named after a file: ipykernel writes each cell
# to /tmp/ipykernel_PID/HASH.py, codeinterp names it "<cell N>".
_CELL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py|<cell \d+>")
# pandas' Styler makes each table's id from uuid4(), which no seed fixes.
_STYLER_ID = re.compile(r"\bT_[0-9a-f]{5}(?=[_\"' ])")


def normalise(text, paths):
    """What differs from run to run whoever runs it: memory addresses,
    timings, the two working directories and cell file names, temporary
    paths, Styler ids, now; terminal colours; trailing blanks."""
    if text is None:
        return None
    text = _ANSI.sub("", text)
    text = _CELL_FILE.sub("<cell>", text)
    for p in paths:
        text = text.replace(p, "<CWD>")
    text = _ADDR.sub("0x<ADDR>", text)
    text = _TMP.sub("<TMP>", text)
    text = _TIME.sub("<TIME>", text)
    text = _LOOPS.sub(r"<N> \1", text)
    text = _STYLER_ID.sub("T_<ID>", text)
    text = _now(text)
    text = _profile(text)
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


_STAMP = re.compile(r" *\b(\d{4}-\d\d-\d\d)(?:[ T]\d\d:\d\d:\d\d(?:\.\d+)?)?")


def _now(text):
    """Timestamps near now (pd.Timestamp("now") + a few days), at whatever
    precision, with the blanks that pad them to a column's width (pandas
    pads to the longest). The docs' own dates are years back."""
    today = datetime.date.today()

    def sub(m):
        try:
            day = datetime.date.fromisoformat(m.group(1))
        except ValueError:
            return m.group(0)
        return " <NOW>" if abs((day - today).days) < 400 else m.group(0)
    return _STAMP.sub(sub, text)


def _profile(text):
    """A profile (%prun) cut to its header: the rows and their order
    follow the timings."""
    m = re.search(r"\n?( +\d+ function calls.*?\n\s+ncalls[^\n]*)\n.*", text, re.S)
    return text[:m.start()] + "\n" + m.group(1) + "\n<profile rows>" if m else text


def _top_level_items(body):
    """The elements of a set display's body, split at the commas outside
    brackets and quotes, blanks dropped, sorted; None for a dict's body
    (a colon outside brackets): dicts keep their insertion order."""
    items, depth, quote, cur = [], 0, None, []
    for ch in body:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(re.sub(r"\s+", "", "".join(cur)))
            cur = []
            continue
        elif ch == ":" and depth == 0:
            return None
        cur.append(ch)
    items.append(re.sub(r"\s+", "", "".join(cur)))
    return sorted(items)


def _unordered(text):
    """A set display (or frozenset, or lines of print()ed ones) as the
    sorted elements of each, else None. Sets of strings, and of sympy
    objects (whose hashes come from strings), come out in hash order,
    which PYTHONHASHSEED makes differ from process to process, and
    codeinterp's worker has a hash seed of its own that no host can set."""
    if not text or not re.match(r"(frozenset\()?\{", text.strip()):
        return None
    out = []
    for line in re.split(r"\n(?=\S)", text.strip()):
        m = re.fullmatch(r"(frozenset\()?\{(.*)\}\)?", line.strip(), re.S)
        items = _top_level_items(m.group(2)) if m else None
        out.append(line if items is None else items)
    return out


def same_text(a, b):
    if a == b:
        return True
    ua = _unordered(a)
    return ua is not None and ua == _unordered(b)


def _shifted(a, b):
    """b is a with a line more or less at either end, or both."""
    a, b = a.split("\n"), b.split("\n")
    return any(x == y for x in (a, a[1:], a[:-1], a[1:-1]) for y in (b, b[1:], b[:-1], b[1:-1])
               if x and y)


def compare(j, c, paths, source=""):
    """The fields in which the two outcomes differ: [(field, jupyter, codeinterp)].

    Jupyter's pager text (obj?, %prun) is compared as stdout: codeinterp
    has no pager and prints it. In a cell that sleeps, stdout may have a
    line more or less at either end: a task that prints while the cell
    sleeps races the end of the sleep, on either side."""
    diffs = []
    if j.status != c.status:
        diffs.append(("status", j.status, c.status))
    elif j.status == "error" and j.ename != c.ename:
        diffs.append(("ename", j.ename, c.ename))
    js = normalise(j.stdout + ("\n" if j.stdout and j.page else "") + j.page, paths)
    cs = normalise(c.stdout, paths)
    if not same_text(js, cs) and not ("sleep(" in source and _shifted(js, cs)):
        diffs.append(("stdout", js, cs))
    jv, cv = normalise(j.value, paths), normalise(c.value, paths)
    if not same_text(jv, cv):
        diffs.append(("value", jv, cv))
    if j.kinds() != c.kinds():
        diffs.append(("outputs", describe_kinds(j), describe_kinds(c)))
    return diffs


def describe_kinds(o):
    return " ".join("%s(%s)" % (t, ",".join(m)) for t, m in o.kinds()) or "none"


# ------------------------------------------------------------ categories

def ipython_python(source):
    """The cell as IPython runs it (magics as get_ipython() calls)."""
    from IPython.core.inputtransformer2 import TransformerManager
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # a cell IPython cannot even transform
        return source


_FORBIDDEN_PY = re.compile(
    r"\bget_ipython\(\)\.(system|getoutput)\(|"
    r"run_cell_magic\('(bash|sh|script|system|perl|ruby|python2|python3|pypy|sx)'|"
    r"run_line_magic\('(sx|system|sc|pip|conda|mamba)'|"
    r"\b(subprocess|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|pty|socket|urllib|"
    r"http\.client|requests|aiohttp|smtplib|ftplib)\b")


def forbidden(source):
    """What the cell does that the sandbox forbids (a shell command, a
    subprocess, the network), or None."""
    m = _FORBIDDEN_PY.search(ipython_python(source))
    return m.group(0) if m else None


def ipython_syntax(source):
    """The first IPython-only construct of the cell: "!shell", "%magic",
    "%%magic", "obj?" help; None for plain Python."""
    py = ipython_python(source)
    if py.strip() == source.strip():
        return None
    m = re.search(r"run_cell_magic\('(\w+)'", py)
    if m:
        return "%%" + m.group(1)
    m = re.search(r"run_line_magic\('(\w+)'", py)
    if m:
        return "%" + m.group(1)
    if "get_ipython().system(" in py or "get_ipython().getoutput(" in py:
        return "!shell"
    if "run_line_magic('pinfo" in py or "get_ipython().run_line_magic" in py or "?" in source:
        return "obj? help"
    return "IPython syntax"


@dataclass
class Verdict:
    match: bool
    refused: bool = False       # refused by design: out of the rate
    category: str = ""
    fault: str = ""             # codeinterp, cascade, design, unsorted
    detail: str = ""            # which magic, which earlier cell...
    diffs: list = field(default_factory=list)


def classify(cell, j, c, diffs, broken):
    """The verdict on one cell: match, refused by design, or a mismatch
    with the category it is reported under (see CATEGORY_RULES)."""
    if not diffs:
        return Verdict(True)
    if c.status == "error" and POLICY.search(c.evalue or ""):
        why = forbidden(cell.source)
        if why:
            return Verdict(False, True, f"refused by design ({why})", "design", diffs=diffs)
        return Verdict(False, False, "refused with the sandbox message, but the cell "
                       "does nothing the sandbox forbids", "codeinterp", diffs=diffs)
    for rule in CATEGORY_RULES:
        found = rule(cell, j, c, diffs, broken)
        if found:
            category, fault, detail = (found + ("",))[:3]
            return Verdict(False, False, category, fault, detail=detail, diffs=diffs)
    fields = "+".join(d[0] for d in diffs)
    return Verdict(False, False, f"other ({fields} differ)", "unsorted", diffs=diffs)


def _missing_name(evalue):
    m = re.search(r"name '(\w+)' is not defined", evalue or "")
    return m.group(1) if m else None


def rule_cascade(cell, j, c, diffs, broken):
    """A NameError for a name an earlier mismatching cell should have bound."""
    name = _missing_name(c.evalue) if c.ename in ("NameError", "UnboundLocalError") else None
    if name and name not in broken and "*" in broken:
        name = "*"
    if name and name in broken and j.status == "ok":
        origin, refused = broken[name]
        if refused:
            return ("cascade: NameError for a name that a cell refused by design did not bind",
                    "design", f"{name} from {origin}")
        return ("cascade: NameError for a name that an earlier mismatching cell did not bind",
                "cascade", f"{name} from {origin}")
    return None


def rule_ipython_syntax(cell, j, c, diffs, broken):
    kind = ipython_syntax(cell.source)
    if kind and c.ename in ("SyntaxError", "IndentationError"):
        if kind in ("%pinfo", "%pinfo2", "%psearch"):
            kind = "obj? help"
        group = kind if kind in ("!shell", "obj? help") else (
            "%%cell magic" if kind.startswith("%%") else "%line magic")
        return (f"IPython syntax is a SyntaxError: {group}", "codeinterp", kind)
    return None


def rule_await(cell, j, c, diffs, broken):
    if c.ename == "SyntaxError" and "outside function" in (c.evalue or "") and \
            re.search(r"\b(await|async for|async with)\b", cell.source):
        return ("top-level await is a SyntaxError", "codeinterp")
    return None


def rule_display(cell, j, c, diffs, broken):
    """display() of an IPython.display object printed as its repr."""
    if re.search(r"<IPython\.(core\.)?display\.\w+ object>", c.stdout) and \
            any(t == "display_data" for t, _ in j.kinds()):
        return ("IPython.display object printed as <... object> instead of display_data",
                "codeinterp")
    return None


def _fields(diffs):
    return {d[0] for d in diffs}


def rule_pandas_width(cell, j, c, diffs, broken):
    """A frame or series laid out differently: Jupyter's pandas takes
    display.max_columns 20 and width 80 in a kernel; a terminal-less
    worker lays it out otherwise."""
    for name, a, b in diffs:
        if name in ("value", "stdout") and a and b and _frame_like(a) and _frame_like(b) \
                and _squash(a) != _squash(b) and ("..." in a) != ("..." in b):
            return (f"pandas {name}: columns elided ('...') on one side only "
                    "(display.max_columns / width)", "codeinterp")
        if name in ("value", "stdout") and a and b and _frame_like(a) and _frame_like(b) and \
                max(map(len, a.split("\n"))) != max(map(len, b.split("\n"))):
            return (f"pandas {name}: wrapped at another width (display.width)", "codeinterp")
    return None


def _frame_like(text):
    lines = text.split("\n")
    return len(lines) >= 2 and bool(re.match(r"^\s*\S+(\s{2,}\S+)+\s*$", lines[0]))


def _squash(text):
    return re.sub(r"\s+", "", text or "")


def rule_empty_figure(cell, j, c, diffs, broken):
    """plt.figure() alone: the inline backend shows the empty figure as
    display_data text/plain "<Figure size ... with 0 Axes>"."""
    extra = [t for t in j.texts("display_data") if t not in c.texts("display_data")]
    if _fields(diffs) == {"outputs"} and extra and all("with 0 Axes>" in t for t in extra):
        return ("figure with no axes: Jupyter shows it as display_data text/plain "
                "'<Figure size ... with 0 Axes>', codeinterp shows nothing", "codeinterp")
    return None


def rule_figure_twice(cell, j, c, diffs, broken):
    """A cell whose value is a Figure: its execute_result has image/png,
    and the inline backend shows the same open figure once more."""
    def pngs(o):
        return [t for t, m in o.kinds() if "image/png" in m]
    if _fields(diffs) == {"outputs"} and "execute_result" in pngs(j) and \
            len(pngs(j)) == 2 and len(pngs(c)) == 1:
        return ("a Figure as the cell's value: Jupyter shows it twice (execute_result and "
                "the inline backend's display_data), codeinterp once", "codeinterp")
    return None


def rule_asyncio(cell, j, c, diffs, broken):
    """Jupyter runs each cell inside its running asyncio loop."""
    if "asyncio" not in cell.source and "await" not in cell.source:
        return None
    for name, a, b in diffs:
        if name == "value" and "running=True" in (a or "") and "running=False" in (b or ""):
            return ("asyncio: get_event_loop() is not running during a cell "
                    "(Jupyter's is: cells run in the kernel's loop)", "codeinterp")
        if name == "stdout" and (a or "").startswith(b or "") and a != b:
            return ("asyncio: a task an earlier cell started does not run while a later "
                    "cell awaits (Jupyter's loop runs it)", "codeinterp")
        if name == "value" and re.sub(r"Task-\d+", "Task-N", a or "") == \
                re.sub(r"Task-\d+", "Task-N", b or ""):
            return ("asyncio: Task-N names number on (the kernel's own tasks count)",
                    "codeinterp")
    return None


def rule_frontend(cell, j, c, diffs, broken):
    """pandas asks console.in_ipython_frontend() ("zmq" in the type of
    get_ipython()) before wrapping a Categorical's categories line."""
    for name, a, b in diffs:
        if name == "value" and "Categories (" in (a or "") and _squash(a) == _squash(b):
            return ("pandas: console.in_ipython_frontend() is False, so a Categorical's "
                    "categories line is wrapped at display.width", "codeinterp")
    return None


def rule_encoding(cell, j, c, diffs, broken):
    for name, a, b in diffs:
        if name == "stdout" and a and b and a.replace("UTF-8", "utf-8") == b:
            return ("sys.stdout.encoding is 'utf-8' (ipykernel's OutStream says 'UTF-8'), "
                    "as pandas' display.encoding shows", "codeinterp")
    return None


_PRETTY = [
    ("types as dotted names", lambda t: re.sub(r"<class '([\w.]+)'>", r"\1", t)),
    ("<X at 0x..> for <X object at 0x..>", lambda t: t.replace(" object at 0x", " at 0x")),
]


def rule_pretty(cell, j, c, diffs, broken):
    """The value is what IPython's pretty printer makes of what codeinterp
    gives as repr(): long containers broken over lines at 79 columns, a
    type printed as its dotted name (str, numpy.int64), an object without
    a repr of its own as <module.Class at 0x...>."""
    for name, a, b in diffs:
        if name != "value" or not a or not b:
            continue
        seen = []
        for what, change in _PRETTY:
            if change(b) != b:
                seen.append(what)
                b = change(b)
        if _squash(a) == _squash(b):
            return ("value text/plain: repr() where Jupyter has IPython's pretty printer",
                    "codeinterp", ", ".join(seen) or "line breaks")
    return None


def rule_pandas_option(cell, j, c, diffs, broken):
    if re.search(r"\b(get_option|describe_option|options\.display)\b", cell.source) and \
            _fields(diffs) & {"stdout", "value"}:
        return ("pandas: an option's value is not a kernel's (display.max_columns 20, "
                "display.width 80, encoding)", "codeinterp")
    return None


def rule_figure_text(cell, j, c, diffs, broken):
    for name, a, b in diffs:
        if name == "value" and a and b and a.startswith("<Figure size") and b.startswith("<Figure size"):
            return ("figure text/plain: another figure size (Jupyter's inline backend "
                    "rcParams)", "codeinterp")
    return None


def rule_outputs(cell, j, c, diffs, broken):
    """Rich outputs of other kinds or MIME types, the rest equal."""
    if _fields(diffs) != {"outputs"}:
        return None
    jm = {(t, m) for t, ms in j.kinds() for m in ms}
    cm = {(t, m) for t, ms in c.kinds() for m in ms}
    if jm == cm:
        return ("outputs: the same MIME types in another number of messages", "codeinterp")
    only_j = sorted("%s %s" % x for x in jm - cm)
    only_c = sorted("%s %s" % x for x in cm - jm)
    parts = []
    if only_j:
        parts.append("Jupyter only: " + ", ".join(only_j))
    if only_c:
        parts.append("codeinterp only: " + ", ".join(only_c))
    return ("outputs: " + "; ".join(parts), "codeinterp")


def rule_slow(cell, j, c, diffs, broken):
    """A timeout on one side where the other took more than half as long:
    the cell is slow everywhere, and which side crosses the line is luck."""
    sides = sorted([j, c], key=lambda o: o.status != "timeout")
    if sides[0].status == "timeout" and sides[1].status != "timeout" and \
            sides[1].seconds > sides[0].seconds / 2:
        who = "Jupyter" if sides[0] is j else "codeinterp"
        return (f"slow cell: {who} timed out, the other side took over half the timeout",
                "harness")
    return None


def rule_status(cell, j, c, diffs, broken):
    if "status" in _fields(diffs) or "ename" in _fields(diffs):
        jd = j.ename if j.status == "error" else j.status
        cd = c.ename if c.status == "error" else c.status
        return (f"status: Jupyter {jd}, codeinterp {cd}", "codeinterp")
    return None


def rule_value_presence(cell, j, c, diffs, broken):
    for name, a, b in diffs:
        if name == "value" and (a is None) != (b is None):
            side = "Jupyter" if a is not None else "codeinterp"
            return (f"value: only {side} has one", "codeinterp")
    return None


# In order: the first that applies names the category.
CATEGORY_RULES = [rule_cascade, rule_ipython_syntax, rule_await, rule_slow, rule_status,
                  rule_display,
                  rule_empty_figure, rule_figure_twice, rule_asyncio, rule_frontend,
                  rule_encoding, rule_figure_text, rule_pandas_width, rule_pretty,
                  rule_pandas_option,
                  rule_value_presence, rule_outputs]


# ----------------------------------------------------------------- running

@dataclass
class CellReport:
    notebook: str
    origin: str
    source: str
    verdict: Verdict
    jupyter: Outcome
    codeinterp: Outcome


def run_both(jside, cside, code, timeout):
    """Runs code on both sides at once (the binding releases the GIL)."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("c", cside.run(code, timeout)))
    t.start()
    try:
        j = jside.run(code, timeout)
    finally:
        t.join()
    if "c" not in box:
        raise RuntimeError("the codeinterp side raised; see above")
    return j, box["c"]


def star_import(source):
    """{"*"} when the cell binds names no reading of it can list: %pylab,
    %run, from M import *."""
    if re.search(r"^\s*%(pylab|run)\b|\bimport \*", source, re.M):
        return {"*"}
    return set()


def bound_names(source):
    tree = corpus.python_of(source)
    return corpus.global_names(tree) if tree is not None else set()


def run_notebook(nb, tmp, timeout, progress, isolated):
    """Both sides from fresh, the notebook's cells in order: CellReports."""
    workdir = tempfile.mkdtemp(prefix="nb-", dir=tmp)
    for name, data in nb.files.items():
        os.makedirs(os.path.join(workdir, os.path.dirname(name)), exist_ok=True)
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(data)
    jside = JupyterSide(tmp, workdir, isolated)
    cside = None
    try:
        cside = CodeinterpSide(nb.files, timeout)
        paths = sorted({workdir, os.path.realpath(workdir), cside.workspace,
                        os.path.realpath(cside.workspace)}, key=len, reverse=True)
        return run_cells(nb, jside, cside, paths, timeout, progress)
    finally:
        jside.close()
        if cside is not None:
            cside.close()


def run_setup(nb, jside, cside, timeout):
    for code in [SEED_CELL] + nb.setup:
        j, c = run_both(jside, cside, code, timeout)
        if j.status != "ok" or c.status != "ok":
            print(f"  setup cell failed (jupyter {j.ename}, codeinterp {c.ename}): {code!r}",
                  file=sys.stderr)


def run_cells(nb, jside, cside, paths, timeout, progress):
    reports = []
    broken = {}       # name -> (origin, refused) of the mismatching cell that should bind it
    run_setup(nb, jside, cside, timeout)
    for cell in nb.runnable():
        if cell.fresh:
            jside.restart()
            cside.restart()
            run_setup(nb, jside, cside, timeout)
        j, c = run_both(jside, cside, cell.source, timeout)
        diffs = compare(j, c, paths, cell.source)
        verdict = classify(cell, j, c, diffs, broken)
        if not verdict.match and c.status != "ok":
            for name in bound_names(cell.source) | star_import(cell.source):
                broken.setdefault(name, (cell.origin, verdict.refused))
        elif verdict.match:
            for name in bound_names(cell.source):
                broken.pop(name, None)
        reports.append(CellReport(nb.name, cell.origin, cell.source, verdict, j, c))
        if progress:
            progress(reports[-1])
    return reports


# ---------------------------------------------------------------- report

def short(text, n=300):
    if text is None:
        return "None"
    text = text if len(text) <= n else text[:n - 20] + " ... " + text[-15:]
    return text.replace("\n", "\n        ")


def excerpts(a, b, n=300):
    """a and b shortened to where they first differ, with some before."""
    if a is None or b is None or len(a) <= n and len(b) <= n:
        return short(a, n), short(b, n)
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, a.rfind("\n", 0, max(0, k - 60)) + 1) if k > 60 else 0
    lead = "... " if start else ""
    return short(lead + a[start:], n), short(lead + b[start:], n)


def print_mismatch(r, out):
    v = r.verdict
    tag = "REFUSED" if v.refused else "MISMATCH"
    detail = f": {v.detail}" if v.detail else ""
    print(f"  {tag} {r.origin}  [{v.category}{detail}]", file=out)
    print("    source: " + short(r.source, 400), file=out)
    for name, a, b in v.diffs:
        if name in ("status", "ename"):
            a = f"{r.jupyter.status} {r.jupyter.ename or ''}: {short(r.jupyter.evalue, 160)}"
            b = f"{r.codeinterp.status} {r.codeinterp.ename or ''}: {short(r.codeinterp.evalue, 160)}"
        else:
            a, b = excerpts(a, b)
        print(f"    {name}:\n      jupyter:    {a}\n      codeinterp: {b}", file=out)
    for side, o in (("jupyter", r.jupyter), ("codeinterp", r.codeinterp)):
        if o.note:
            print(f"    note ({side}): {o.note}", file=out)


def summarise(reports):
    """(matching, counted, refused, {category: [reports]}) over all cells."""
    refused = [r for r in reports if r.verdict.refused]
    counted = [r for r in reports if not r.verdict.refused]
    matching = [r for r in counted if r.verdict.match]
    cats = {}
    for r in counted:
        if not r.verdict.match:
            cats.setdefault((r.verdict.category, r.verdict.fault), []).append(r)
    return matching, counted, refused, cats


def print_summary(reports, nbs, out):
    matching, counted, refused, cats = summarise(reports)
    print("\nmismatch categories (count, who is at fault, examples):", file=out)
    for (cat, fault), rs in sorted(cats.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rs):5}  [{fault}] {cat}", file=out)
        details = {}
        for r in rs:
            if r.verdict.detail and not r.verdict.category.startswith("cascade"):
                details[r.verdict.detail] = details.get(r.verdict.detail, 0) + 1
        if details:
            print("           " + ", ".join(f"{d} {n}" for d, n in
                                            sorted(details.items(), key=lambda kv: -kv[1])[:12]),
                  file=out)
        for r in rs[:3]:
            print(f"           e.g. {r.notebook} {r.origin}: {short(r.source.split(chr(10))[0], 70)}",
                  file=out)
    skipped = corpus.skip_summary(nbs)
    print(f"\nskipped by the corpus: {sum(skipped.values())} cells", file=out)
    for reason, n in skipped.items():
        print(f"  {n:5}  {reason}", file=out)
    pct = 100.0 * len(matching) / len(counted) if counted else 100.0
    both = sum(r.jupyter.status == "error" for r in matching)
    print(f"\nof the {len(matching)} matching cells, {both} raise the same exception on "
          "both sides (a notebook written for an older library, or :okexcept:)", file=out)
    print(f"\nrefused by design (left out of the rate): {len(refused)} cells", file=out)
    for r in refused:
        print(f"  {r.notebook} {r.origin}: {short(r.source.split(chr(10))[0], 70)}", file=out)
    print(f"jupyter differential: {len(matching)} of {len(counted)} cells match ({pct:.1f}%)",
          file=out)
    return pct


def write_json(path, reports, nbs):
    matching, counted, refused, cats = summarise(reports)
    doc = {
        "matching": len(matching), "counted": len(counted), "refused": len(refused),
        "rate": 100.0 * len(matching) / len(counted) if counted else 100.0,
        "categories": [{"category": c, "fault": f, "count": len(rs),
                        "cells": [f"{r.notebook} {r.origin}" for r in rs]}
                       for (c, f), rs in sorted(cats.items(), key=lambda kv: -len(kv[1]))],
        "skipped": corpus.skip_summary(nbs),
        "cells": [{"notebook": r.notebook, "origin": r.origin, "source": r.source,
                   "verdict": asdict(r.verdict), "jupyter": asdict(r.jupyter),
                   "codeinterp": asdict(r.codeinterp)} for r in reports],
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=list)


# ------------------------------------------------------------------ main

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build", nargs="?", default=os.environ.get("BUILD", "build"),
                   help="build tree with libcodeinterp.so.0 (default $BUILD, else build)")
    p.add_argument("--fast", action="store_true", help="only the fast subset: " + ", ".join(
        f"{k}[:{v}]" if v else k for k, v in corpus.FAST.items()))
    p.add_argument("--notebook", action="append",
                   help="only this notebook (see --list); may be repeated")
    p.add_argument("--list", action="store_true", help="print the corpus and exit")
    p.add_argument("--json", help="write a machine-readable report here")
    p.add_argument("--min-rate", type=float, help="exit 1 when the match rate (%%) is below")
    p.add_argument("--timeout", type=float, default=CELL_TIMEOUT, help="seconds per cell, each side")
    p.add_argument("--quiet", action="store_true", help="no per-cell progress on stderr")
    return p.parse_args(argv)


def load_binding(build):
    """Points the binding at the build tree's library (before import)."""
    build = os.path.abspath(build)
    lib = os.path.join(build, "libcodeinterp.so.0")
    if not os.path.exists(lib):
        sys.exit(f"differential.py: {lib} not found; run make first")
    os.environ["CODEINTERP_LIBRARY"] = lib
    sys.path.insert(0, os.path.join(TOP, "bindings", "python"))
    importlib.import_module("codeinterp")  # fails here, not in the first notebook
    # Which build was measured: another one may be being made meanwhile.
    stamps = []
    for name in ("libcodeinterp.so.0", "codeinterp-worker"):
        path = os.path.join(build, name)
        if os.path.exists(path):
            when = datetime.datetime.fromtimestamp(os.stat(path).st_mtime)
            stamps.append(f"{name} of {when:%Y-%m-%d %H:%M:%S}")
    return f"codeinterp: {build}: " + ", ".join(stamps)


def progress_line(r):
    mark = "." if r.verdict.match else ("R" if r.verdict.refused else "x")
    print(mark, end="", file=sys.stderr, flush=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    nbs = corpus.load(fast=args.fast, only=args.notebook)
    if not nbs:
        sys.exit(f"differential.py: no notebook {args.notebook!r} (see --list)")
    if args.list:
        corpus.describe(nbs, sources=True)
        return 0
    print(load_binding(args.build), flush=True)
    tmp = tempfile.mkdtemp(prefix="codeinterp-jupyter-")
    os.makedirs(os.path.join(tmp, "runtime"))
    isolate_jupyter(tmp)
    isolate = can_unshare_net()
    write_kernelspec(tmp, isolate)
    args.isolated = isolate
    print("kernel: /usr/bin/python3 -m ipykernel_launcher" +
          (" in a network namespace of its own" if isolate else
           " (unshare --net unavailable: the kernel shares this host's network)"), flush=True)
    reports = []
    try:
        for nb in nbs:
            reports += report_notebook(nb, tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pct = print_summary(reports, nbs, sys.stdout)
    if args.json:
        write_json(args.json, reports, nbs)
    if args.min_rate is not None and pct < args.min_rate:
        print(f"jupyter differential: below the minimum rate {args.min_rate}%")
        return 1
    return 0


def report_notebook(nb, tmp, args):
    t0 = time.monotonic()
    if not args.quiet:
        print(f"{nb.name} ", end="", file=sys.stderr, flush=True)
    rs = run_notebook(nb, tmp, args.timeout, None if args.quiet else progress_line, args.isolated)
    if not args.quiet:
        print("", file=sys.stderr)
    counted = [r for r in rs if not r.verdict.refused]
    ok = sum(r.verdict.match for r in counted)
    print(f"\n== {nb.name}: {ok} of {len(counted)} cells match"
          f" ({len(rs) - len(counted)} refused by design, {len(nb.cells) - len(rs)} skipped,"
          f" {time.monotonic() - t0:.1f} s)", flush=True)
    for r in rs:
        if not r.verdict.match:
            print_mismatch(r, sys.stdout)
    sys.stdout.flush()
    return rs


if __name__ == "__main__":
    sys.exit(main())
