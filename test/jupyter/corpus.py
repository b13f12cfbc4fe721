"""The notebook corpus of the Jupyter differential test (differential.py).

Real notebook code that nobody on this project wrote, read from Debian's
documentation packages, as an ordered list of Notebook objects, each an
ordered list of Cell objects:

  pandas/<page>    the ``.. ipython:: python`` blocks of the pandas user
                   guide (python-pandas-doc), split into cells exactly as
                   IPython's sphinx directive splits them: its own
                   process_pure_python() and block_parser() are loaded from
                   the installed IPython/sphinxext/ipython_directive.py
  pandas/style     the user guide's real notebook, style.ipynb.gz
  sympy/<name>     the notebooks of python-sympy-doc's examples/
  ipython/<page>   python-ipython-doc: the sphinx directive's own page
                   (``.. ipython::`` blocks, run at doc build time) and the
                   In [N]: transcripts of three interactive pages

A cell that cannot run here is kept with a skip reason (a missing module,
a data file that no package ships, the network, a clipboard, the verbatim
flag), and so is every later cell that uses a name such a cell would have
defined: otherwise those would fail the same way on both sides and count
as matches. Nothing here runs any cell.

    /usr/bin/python3 test/jupyter/corpus.py [--fast]    prints the corpus
"""
import ast
import glob
import gzip
import importlib.util
import io
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

PANDAS_DOC = "/usr/share/doc/python-pandas-doc/html"
PANDAS_GUIDE = PANDAS_DOC + "/_sources/user_guide"
STYLE_NOTEBOOK = PANDAS_DOC + "/user_guide/style.ipynb.gz"
SYMPY_EXAMPLES = "/usr/share/doc/python-sympy-doc/examples"
IPYTHON_SOURCES = "/usr/share/doc/python-ipython-doc/html/_sources"
DIRECTIVE = "/usr/lib/python3/dist-packages/IPython/sphinxext/ipython_directive.py"
SCIPY_IRIS = "/usr/lib/python3/dist-packages/scipy/spatial/tests/data/iris.txt"

# pandas' doc/source/conf.py sets ipython_execlines to these: every page's
# blocks run after them. The directive's default (IPython's own docs).
PANDAS_EXECLINES = "import numpy as np\nimport pandas as pd"
DEFAULT_EXECLINES = "import numpy as np\nimport matplotlib.pyplot as plt"

# io and scale are mostly file formats whose engines (pyarrow, tables,
# openpyxl, dask, fsspec) Debian 12 does not have here, and URLs; what
# would be left of them is a handful of read_csv calls.
PANDAS_PAGES_LEFT_OUT = {"io", "scale", "index"}

# The interactive pages whose ``.. code-block:: ipython`` transcripts are
# taken; reference.rst and tips.rst are left out: they call exit(),
# %edit and cd, which end or move a kernel.
IPYTHON_TRANSCRIPT_PAGES = ["tutorial", "python-ipython-diff", "autoawait"]

# The fixed quick subset (--fast), 96 cells to run: the first cells of
# pandas' 10 minutes (frames, series, their reprs), and the two IPython
# pages with magics, shell escapes, help, top-level await and pylab
# plots. A prefix of a page, so each cell has the state its page gave it.
FAST = {"pandas/10min": 50, "ipython/sphinxext": None, "ipython/python-ipython-diff": None}


@dataclass
class Cell:
    """One cell: its source, where it came from, and why it is skipped."""

    source: str
    origin: str                   # "10min.rst.txt:123" or "spin.ipynb#4"
    okexcept: bool = False        # the page expects it to raise
    suppress: bool = False        # run but hidden in the rendered page
    fresh: bool = False           # starts a new session (a transcript's In [1])
    skip: Optional[str] = None    # the reason it is not run, or None


@dataclass
class Notebook:
    """A page or notebook: cells in order, setup cells and data files."""

    name: str
    path: str
    cells: List[Cell]
    # Run on both sides before the first cell and not compared: the
    # directive's execlines, which the rendered page never shows.
    setup: List[str] = field(default_factory=list)
    # Files put in the kernel's directory and the session's workspace.
    files: Dict[str, bytes] = field(default_factory=dict)

    def runnable(self):
        return [c for c in self.cells if c.skip is None]


# ------------------------------------------------ IPython's sphinx directive

class _DirectiveShell:
    """Stands in for EmbeddedSphinxShell while its splitter runs.

    process_pure_python() only formats prompts, except after an @savefig
    line, where it asks the shell to run plt.clf(): nothing is run here.
    """

    promptin = "In [%d]:"

    def ensure_pyplot(self):
        pass

    def process_input_line(self, line, store_history=True):
        pass

    def clear_cout(self):
        pass


_directive = {}


def _directive_namespace():
    """block_parser, process_pure_python and their constants, loaded from
    the installed directive's source (importing the module needs sphinx
    and docutils, which this machine does not have)."""
    if _directive:
        return _directive
    with open(DIRECTIVE, encoding="utf-8") as f:
        tree = ast.parse(f.read(), DIRECTIVE)
    wanted = {"block_parser", "process_pure_python"}
    body = [n for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.name in wanted]
    constants = {"COMMENT", "INPUT", "OUTPUT", "PSEUDO_DECORATORS"}
    consts = [n for n in tree.body if isinstance(n, ast.Assign)
              and {x.id for x in ast.walk(n.targets[0]) if isinstance(x, ast.Name)} <= constants]
    ns = {"ast": ast}
    exec(compile(ast.Module(body=consts + body, type_ignores=[]), DIRECTIVE, "exec"), ns)
    _directive.update(ns)
    _directive["rgxin"] = re.compile(r'In \[(\d+)\]:\s?(.*)\s*')
    _directive["rgxout"] = re.compile(r'Out\[(\d+)\]:\s?(.*)\s*')
    return _directive


def split_transcript(content):
    """The inputs of a transcript that the directive never ran: as
    split_directive(), but each In [N]: prompt starts a part even without
    a blank line before it, as it does for a reader (the directive would
    take a second prompt for output of the first)."""
    rgxin = _directive_namespace()["rgxin"]
    lines = []
    for line in content:
        if rgxin.match(line) and lines and lines[-1].strip():
            lines.append("")
        lines.append(line)
    return split_directive(lines, False)


def split_directive(content, python):
    """The directive's inputs of one block, as (decorator, source) pairs.

    IPythonDirective.run(): with the ``python`` argument the content is
    first given prompts by process_pure_python(); then it is cut into parts
    at blank lines, and block_parser() finds each part's INPUT.
    """
    d = _directive_namespace()
    if python:
        content = d["process_pure_python"](_DirectiveShell(), content)
    inputs = []
    for part in "\n".join(content).split("\n\n"):
        block = d["block_parser"](part, d["rgxin"], d["rgxout"], "In [%d]:", "Out[%d]:")
        for token, data in block:
            if token == d["INPUT"]:
                decorator, source, _rest = data
                inputs.append((decorator, source))
    return inputs


# ----------------------------------------------------------- reading rst

_DIRECTIVE_LINE = re.compile(r"^(\s*)\.\. ([\w-]+)::\s*(.*?)\s*$")
_LITERAL_DIRECTIVES = {"code-block", "sourcecode", "code", "parsed-literal",
                       "literalinclude", "highlight", "doctest", "testcode"}


def _indent(line):
    return len(line) - len(line.lstrip())


def _block(lines, i, indent):
    """Options and content of the directive at lines[i]: (options, content,
    index after the block). Content is dedented as docutils does."""
    j = i + 1
    options = []
    while j < len(lines) and re.match(r"^\s+:[\w-]+:", lines[j]) and _indent(lines[j]) > indent:
        options.append(lines[j].strip().strip(":").split(":")[0])
        j += 1
    body = []
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
        body.append(lines[j])
        j += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    margin = min((_indent(x) for x in body if x.strip()), default=0)
    return options, [x[margin:] for x in body], j


def rst_directives(text):
    """(name, argument, options, content, line number) of each directive
    of an rst text that docutils would parse as one, and of each literal
    block (after "::"), named "::". A directive in a literal block or in a
    code-block is an example, not a directive."""
    lines = text.split("\n")
    out = []
    literal = None        # indent of the line that opened a literal block
    i = 0
    while i < len(lines):
        line = lines[i]
        if literal is not None:
            start = i
            _options, content, i = _block(lines, i - 1, literal)
            out.append(("::", "", [], content, start))
            literal = None
            continue
        m = _DIRECTIVE_LINE.match(line)
        if m:
            indent = len(m.group(1))
            options, content, j = _block(lines, i, indent)
            out.append((m.group(2), m.group(3), options, content, i + 1))
            if m.group(2) in _LITERAL_DIRECTIVES:
                i = j
                continue
        elif line.rstrip().endswith("::"):
            literal = _indent(line)
        i += 1
    return out


def ipython_blocks_cells(path, rel):
    """The cells of a page's ``.. ipython::`` blocks."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cells = []
    for name, arg, options, content, lineno in rst_directives(text):
        if name != "ipython":
            continue
        for k, (decorator, source) in enumerate(split_directive(content, "python" in arg.split())):
            cell = Cell(source.rstrip("\n"), f"{rel}:{lineno}[{k}]",
                        okexcept="okexcept" in options or decorator == "@okexcept",
                        suppress="suppress" in options or decorator == "@suppress")
            if "verbatim" in options or decorator == "@verbatim":
                cell.skip = "verbatim: the directive does not run it"
            cells.append(cell)
    return cells


def transcript_cells(path, rel):
    """The In [N]: inputs of a page's ``.. code-block:: ipython`` (or
    sourcecode, or literal) transcripts, parsed with the directive's
    block_parser. The
    doc build did not run these: they show what a session looks like, and
    one that starts at In [1] is a new session: its first cell is fresh."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cells = []
    for name, arg, _options, content, lineno in rst_directives(text):
        # IPython's conf.py makes ipython the highlight language of "::".
        if (name in ("code-block", "sourcecode") and arg == "ipython") or \
                (name == "::" and any(_directive_namespace()["rgxin"].match(x) for x in content)):
            first = next((m for m in map(_directive_namespace()["rgxin"].match, content) if m), None)
            fresh = first is not None and first.group(1) == "1"
            for k, (_dec, source) in enumerate(split_transcript(content)):
                if source.strip():
                    cells.append(Cell(source.rstrip("\n"), f"{rel}:{lineno}[{k}]", fresh=fresh))
                    fresh = False
    return cells


# ------------------------------------------------------- reading notebooks

def notebook_cells(nb, rel):
    return [Cell(c.source, f"{rel}#{i}") for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip()]


def read_notebook(path):
    import nbformat
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return nbformat.read(f, as_version=4)


def _stored_text(cell, mime=None):
    """A stored output of a notebook cell: its stream text, or the data
    of type mime."""
    for out in cell.outputs:
        if mime is None and out.output_type == "stream":
            return out.text
        if mime is not None and mime in out.get("data", {}):
            return out.data[mime]
    return None


def style_templates(nb):
    """The three template files style.ipynb reads from templates/.

    The pandas source tree has them, the Debian package does not; the
    notebook's own stored outputs hold their text (one printed, two shown
    as HTML), so they are taken from there.
    """
    files = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        if 'open("templates/myhtml.tpl")' in c.source:
            text = _stored_text(c)
            if text:
                files["templates/myhtml.tpl"] = text.encode()
        for name, var in (("html_style_structure.html", "style_structure"),
                          ("html_table_structure.html", "table_structure")):
            if c.source.strip() == f"HTML({var})":
                text = _stored_text(c, "text/html")
                if text:
                    files["templates/" + name] = text.encode()
    return files


def iris_data():
    """data/iris.data as the pandas docs read it (four measurements and
    Name), made from scipy's test copy of Fisher's iris measurements, whose
    150 rows are in the usual order: 50 each of setosa, versicolor and
    virginica. The pandas doc package does not ship its data/ directory."""
    out = io.StringIO()
    out.write("SepalLength,SepalWidth,PetalLength,PetalWidth,Name\n")
    with open(SCIPY_IRIS) as f:
        rows = [line.split() for line in f if line.strip()]
    for k, row in enumerate(rows):
        name = ("Iris-setosa", "Iris-versicolor", "Iris-virginica")[k // 50]
        out.write(",".join("%.1f" % float(v) for v in row) + "," + name + "\n")
    return out.getvalue().encode()


# ----------------------------------------------------------------- skipping

_URL = re.compile(r"\b(?:https?|ftp|s3|gs|gcs)://")
_FETCH = re.compile(r"\b(?:read_\w+|urlopen|urlretrieve|requests\.\w+|Image|"
                    r"download\w*|load_dataset|fetch_\w+)\s*\(")
_FILE_LITERAL = re.compile(
    r"^(?:data/.+|[\w./-]+\.(?:csv|data|txt|json|h5|hdf5?|xlsx?|ods|parquet|feather|"
    r"pkl|pickle|dta|sas7bdat|xpt|sav|html?|xml|tpl|orc|zip|gz|bz2|xz|db|sqlite))$")
_READERS = re.compile(r"^(?:read_\w+|open|load|loadtxt|genfromtxt|imread|"
                      r"HDFStore|ExcelFile|FileSystemLoader|from_custom_template)$")
# pandas methods that need an optional module (pandas raises ImportError).
_OPTIONAL = {
    "to_parquet": "pyarrow", "read_parquet": "pyarrow", "to_feather": "pyarrow",
    "read_feather": "pyarrow", "read_orc": "pyarrow", "to_orc": "pyarrow",
    "to_hdf": "tables", "read_hdf": "tables", "HDFStore": "tables",
    "to_excel": "openpyxl", "read_excel": "openpyxl", "ExcelWriter": "openpyxl",
    "to_markdown": "tabulate", "to_xarray": "xarray", "read_gbq": "pandas_gbq",
    "to_gbq": "pandas_gbq", "read_spss": "pyreadstat", "online": "numba",
}
# Not %load_ext of a missing extension: that is a cell whose failure
# (ModuleNotFoundError in Jupyter) is itself worth comparing.
_MAGIC_MODULES = [(re.compile(r"^\s*%%cython", re.M), "Cython"),
                  (re.compile(r"engine\s*=\s*['\"]numba['\"]"), "numba"),
                  (re.compile(r"^\s*%autoawait\s+trio", re.M), "trio")]
_CLIPBOARD = re.compile(r"\b(?:read_clipboard|to_clipboard)\s*\(")


def python_of(source):
    """The cell as Python, IPython's magics and shell escapes turned into
    get_ipython() calls, so that its names can be read; None when even
    that does not parse."""
    from IPython.core.inputtransformer2 import TransformerManager
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def global_names(tree):
    """The names the cell binds in the notebook's namespace: names() of
    the cell less what is bound inside its functions and classes."""
    found = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                if not isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp,
                                          ast.DictComp, ast.GeneratorExp)):
                    found.add(child.name)
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                found.add(child.id)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).split(".")[0] for a in child.names)
            elif isinstance(child, ast.ExceptHandler) and child.name:
                found.add(child.name)
            todo.append(child)
    return found


_CODE_MAGICS = {"timeit", "time", "prun"}


def _magic_code(tree):
    """The Python that %timeit, %time and %prun (line or cell) run: IPython
    hands it to them as a string, so it is parsed here, their options
    dropped (as many leading words as keep it from parsing)."""
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and _call_name(n) in ("run_line_magic", "run_cell_magic")
                and n.args and isinstance(n.args[0], ast.Constant)
                and n.args[0].value in _CODE_MAGICS):
            continue
        for arg in n.args[1:]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                words = arg.value.split(" ")
                for k in range(len(words)):
                    try:
                        yield ast.parse(" ".join(words[k:]))
                        break
                    except SyntaxError:
                        continue


def names(tree):
    """(names the cell reads, names it binds) at any depth, the code of
    its %timeit, %time and %prun included."""
    loads, stores = set(), set()
    for inner in _magic_code(tree):
        more = names(inner)
        loads |= more[0]
        stores |= more[1]
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (stores if isinstance(n.ctx, (ast.Store, ast.Del)) else loads).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores.add(n.name)
        elif isinstance(n, ast.arg):
            stores.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            stores.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                stores.add((a.asname or a.name).split(".")[0])
    return loads, stores


_installed = {}


def installed(module):
    top = module.split(".")[0]
    if top not in _installed:
        try:
            _installed[top] = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            _installed[top] = False
    return _installed[top]


def _imported_modules(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            yield from (a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            yield n.module


def _call_name(call):
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def missing_module(source, tree):
    """The first module the cell needs that is not installed, or None."""
    for rx, module in _MAGIC_MODULES:
        m = rx.search(source)
        if m and not installed(module or m.group(1)):
            return module or m.group(1)
    if tree is None:
        return None
    for module in _imported_modules(tree):
        if not installed(module):
            return module
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _OPTIONAL.get(_call_name(n)):
            if not installed(_OPTIONAL[_call_name(n)]):
                return _OPTIONAL[_call_name(n)]
    return None


def _string_args(call):
    for a in list(call.args[:2]) + [k.value for k in call.keywords]:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            yield a.value


def missing_file(tree, have, earlier):
    """A data file the cell reads that nobody put there, or None. A file
    whose name an earlier cell mentions is taken to be written by it."""
    if tree is None:
        return None
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and _READERS.match(_call_name(n))):
            continue
        for s in _string_args(n):
            if (_FILE_LITERAL.match(s) or _call_name(n) in ("FileSystemLoader", "from_custom_template")) \
                    and not any(h == s or h.startswith(s.rstrip("/") + "/") for h in have) \
                    and repr(s)[1:-1] not in earlier:
                return s
    return None


def skip_reason(cell, tree, nb, earlier, tainted):
    """Why the cell cannot run here, or None."""
    if _URL.search(cell.source) and _FETCH.search(cell.source):
        return "network: fetches a URL"
    if _CLIPBOARD.search(cell.source):
        return "needs a clipboard"
    module = missing_module(cell.source, tree)
    if module:
        return f"module {module.split('.')[0]} not installed"
    path = missing_file(tree, nb.files, earlier)
    if path:
        return f"data file {path} not shipped"
    if tree is not None:
        # A name the cell binds itself (a loop variable, a parameter) is
        # not the skipped cell's, even where it is also read.
        loads, stores = names(tree)
        used = (loads - stores) & tainted
        if used:
            return "uses %s from a skipped cell" % ", ".join(sorted(used))
    return None


_DEFS = re.compile(r"^\s*(?:c?p?def|class)\s+(?:\w+\s+)*?(\w+)\s*\(|^(\w+)\s*=", re.M)


def _literals(source):
    """The file names a cell mentions (written or read)."""
    return {s for s in re.findall(r"[\"']([^\"'\n]+)[\"']", source) if _FILE_LITERAL.match(s)}


def mark_skips(nb):
    """Sets the skip reason of each cell that cannot run, and of each cell
    that reads a name, or a file, only such a cell would have made. The
    names of a cell that is not Python (%%cython) are guessed from its
    def and assignment lines."""
    tainted, files = set(), set()
    earlier = ""
    for cell in nb.cells:
        tree = python_of(cell.source)
        magic = cell.source.lstrip().startswith("%%")
        stores = global_names(tree) if tree is not None and not magic else \
            {a or b for a, b in _DEFS.findall(cell.source)}
        if cell.skip is None:
            cell.skip = skip_reason(cell, tree, nb, earlier, tainted)
        if cell.skip is None and _literals(cell.source) & files:
            cell.skip = "uses file %s from a skipped cell" % ", ".join(
                sorted(_literals(cell.source) & files))
        if cell.skip is None:
            tainted -= stores
            earlier += cell.source + "\n"
        elif not cell.skip.startswith("verbatim"):
            tainted |= stores
            files |= _literals(cell.source) - set(nb.files)
    return nb


# ------------------------------------------------------------- the corpus

def pandas_pages():
    out = []
    for path in sorted(glob.glob(PANDAS_GUIDE + "/*.rst.txt")):
        page = os.path.basename(path)[:-len(".rst.txt")]
        if page in PANDAS_PAGES_LEFT_OUT:
            continue
        cells = ipython_blocks_cells(path, os.path.basename(path))
        if cells:
            with open(path, encoding="utf-8") as f:
                iris = "data/iris.data" in f.read()
            out.append(Notebook("pandas/" + page, path, cells, setup=[PANDAS_EXECLINES],
                                files={"data/iris.data": iris_data()} if iris else {}))
    return out


def pandas_style():
    nb = read_notebook(STYLE_NOTEBOOK)
    return Notebook("pandas/style", STYLE_NOTEBOOK, notebook_cells(nb, "style.ipynb"),
                    files=style_templates(nb))


def isympy_session(cells):
    """isympy's preamble when the notebook was written for it: a cell
    reads x, sin or another name of ``from sympy import *`` before any cell
    binds it (sympy's beginner notebooks, which store no outputs, were
    run in isympy's session)."""
    import sympy
    from sympy.interactive import session
    wanted = set(dir(sympy)) | set("xyztkmnfgh")
    bound = set()
    for cell in cells:
        tree = python_of(cell.source)
        if tree is None:
            continue
        if re.search(r"^\s*%pylab", cell.source, re.M):
            return []       # names no reading can list: not a sure sign
        bound |= _star_names(tree)
        if (names(tree)[0] - names(tree)[1] - bound) & wanted:
            return [session.preexec_source]
        bound |= global_names(tree)
    return []


def _star_names(tree):
    """The names ``from sympy.M import *`` binds (sympy's own modules are
    imported here to list them); any other star import binds all names
    as far as this reading can tell."""
    import importlib
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names):
            if not (n.module or "").startswith("sympy"):
                return {"*"} | set(dir(importlib.import_module("sympy")))
            try:
                m = importlib.import_module(n.module)
            except ImportError:
                continue
            out |= set(getattr(m, "__all__", [k for k in dir(m) if not k.startswith("_")]))
    return out


def sympy_notebooks():
    out = []
    for path in sorted(glob.glob(SYMPY_EXAMPLES + "/**/*.ipynb", recursive=True)):
        name = os.path.basename(path)[:-len(".ipynb")]
        cells = notebook_cells(read_notebook(path), os.path.basename(path))
        out.append(Notebook("sympy/" + name, path, cells, setup=isympy_session(cells)))
    return out


def ipython_pages():
    path = IPYTHON_SOURCES + "/sphinxext.rst.txt"
    out = [Notebook("ipython/sphinxext", path, ipython_blocks_cells(path, "sphinxext.rst.txt"),
                    setup=[DEFAULT_EXECLINES])]
    for page in IPYTHON_TRANSCRIPT_PAGES:
        path = f"{IPYTHON_SOURCES}/interactive/{page}.rst.txt"
        out.append(Notebook("ipython/" + page, path, transcript_cells(path, page + ".rst.txt")))
    return out


def load(fast=False, only=None):
    """The corpus: a list of Notebook, skips marked. fast: the FAST subset;
    only: a list of names, those notebooks only."""
    nbs = pandas_pages() + [pandas_style()] + sympy_notebooks() + ipython_pages()
    if fast:
        nbs = [nb for nb in nbs if nb.name in FAST]
        for nb in nbs:
            nb.cells = nb.cells[:FAST[nb.name]]
    if only:
        nbs = [nb for nb in nbs if nb.name in only]
    return [mark_skips(nb) for nb in nbs]


def skip_summary(nbs):
    """{reason class: count}, the reason's variable part (which name, which
    module) kept for modules and files and dropped for tainted names."""
    counts = {}
    for nb in nbs:
        for c in nb.cells:
            if c.skip:
                key = c.skip
                if c.skip.startswith("uses file "):
                    key = "uses a file from a skipped cell"
                elif c.skip.startswith("uses "):
                    key = "uses a name from a skipped cell"
                counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def describe(nbs, out=sys.stdout, sources=False):
    total = run = 0
    for nb in nbs:
        n = len(nb.runnable())
        total += len(nb.cells)
        run += n
        print(f"{nb.name:32} {n:4} cells to run, {len(nb.cells) - n:3} skipped"
              f"{'  files: ' + ', '.join(sorted(nb.files)) if nb.files else ''}", file=out)
        if sources:
            for c in nb.cells:
                tag = f"  [skipped: {c.skip}]" if c.skip else ""
                print(f"  --- {c.origin}{tag}\n" + "\n".join("    " + x for x in c.source.split("\n")),
                      file=out)
    print(f"{len(nbs)} notebooks, {total} cells, {run} to run, {total - run} skipped", file=out)
    for reason, n in skip_summary(nbs).items():
        print(f"  skipped {n:4}: {reason}", file=out)


def main():
    fast = "--fast" in sys.argv
    nbs = load(fast=fast)
    if "--json" in sys.argv:
        json.dump([{"name": nb.name, "cells": [c.__dict__ for c in nb.cells]} for nb in nbs],
                  sys.stdout, indent=1)
    else:
        describe(nbs, sources="--sources" in sys.argv)


if __name__ == "__main__":
    main()
