"""pip's command line inside codeinterp-worker, from the session's wheelhouse.

pip itself cannot work in the sandbox: it fetches from an index (no
network), builds and installs in new processes (none may start), and
writes a site directory that is read-only to the cell. This module
speaks the part of pip's command line that a notebook uses, for `%pip`,
`!pip`, `!python -m pip` and the main() of a cell's `import pip`
(shell.py): install resolves the requirements against the wheels the
host lists (_codeinterp.host_install('list', ''): the signed manifest's
"wheels"), version specifiers and dependencies included, and asks the
host to install each chosen wheel, dependencies first
(host_install('wheel', file)); the host checks its SHA-256 and unpacks it
into the session's site directory, which then goes on sys.path. list,
freeze and show read the installed distributions (importlib.metadata),
with or without a wheelhouse. What pip prints goes to stdout, its errors
and warnings to stderr, in pip's words where pip has them; an error is
printed and gives status 1 (2 for a usage error), as pip's, and never
raises: a notebook's %pip that fails leaves the cell running on.

Versions and specifiers are PEP 440's, through packaging when it can be
imported, else through the fallback below, which orders and matches as
packaging 23 does (a signed package manifest may leave packaging out).
The worker embeds this file (tools/embed.sh) as _codeinterp_pip.
"""
import io, json, os, re, shlex, sys

import _codeinterp as _ci
from _codeinterp_refusals import SHELL, Refused

NO_WHEELHOUSE = 'package installation is not enabled in this session (no wheelhouse)'
_SITE_ONLY = ("this session installs packages only from its wheelhouse, into its site"
              " directory")
# pip freeze leaves out the build tools, as pip 23 does under Python 3.11.
_FREEZE_HIDDEN = frozenset({'pip', 'setuptools', 'distribute', 'wheel'})
_UNAVAILABLE = {
    'uninstall': ('uninstalling is not supported in this session: the installed packages'
                  " and the session's site directory are read-only to the cell"),
    'download': 'pip download needs a package index, and this sandbox has no network',
    'wheel': 'pip wheel builds in new processes, which this sandbox does not start',
    'search': 'pip search needs a package index, and this sandbox has no network',
    'index': 'pip index needs a package index, and this sandbox has no network',
}
_COMMANDS = ('install', 'download', 'uninstall', 'freeze', 'inspect', 'list', 'show', 'check',
             'config', 'search', 'cache', 'index', 'wheel', 'hash', 'completion', 'debug', 'help')


def canonical(name):
    """PEP 503's form of a distribution name."""
    return re.sub(r'[-_.]+', '-', name).lower()


class _Error(Exception):
    """Ends a command with status 1: args are the lines for stderr."""


class _Usage(Exception):
    """A command line pip would not parse: status 2."""


# ------------------------------------------------------------ versions
# The fallback for packaging.version.Version: PEP 440's grammar as
# packaging's VERSION_PATTERN, and its ordering (_cmpkey) as a tuple.
_VERSION = re.compile(r'''
    v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|beta|preview|pre|a|b|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?P<dev>[-_.]?dev[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?''', re.VERBOSE | re.IGNORECASE)
_PRE = {'a': 'a', 'alpha': 'a', 'b': 'b', 'beta': 'b', 'c': 'rc', 'rc': 'rc', 'pre': 'rc',
        'preview': 'rc'}


class Version:
    """A PEP 440 version, compared as packaging compares them; ValueError
    for a string that is none."""

    __slots__ = ('epoch', 'release', 'pre', 'post', 'dev', 'local', '_key')

    def __init__(self, text):
        m = _VERSION.fullmatch(text.strip()) if isinstance(text, str) else None
        if m is None:
            raise ValueError(f'Invalid version: {text!r}')
        self.epoch = int(m['epoch'] or 0)
        self.release = tuple(int(x) for x in m['release'].split('.'))
        self.pre = (_PRE[m['pre_l'].lower()], int(m['pre_n'] or 0)) if m['pre'] else None
        self.post = int(m['post_n1'] or m['post_n2'] or 0) if m['post'] else None
        self.dev = int(m['dev_n'] or 0) if m['dev'] else None
        self.local = tuple(int(p) if p.isdigit() else p.lower()
                           for p in re.split(r'[-_.]', m['local'])) if m['local'] else None
        self._key = self._order()

    def _order(self):
        release = list(self.release)
        while release and release[-1] == 0:
            release.pop()  # 1.0 == 1
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-1,)  # 1.0.dev0 before 1.0a0
        else:
            pre = (1,) if self.pre is None else (0,) + self.pre
        post = (-1,) if self.post is None else (0, self.post)
        dev = (1,) if self.dev is None else (0, self.dev)
        # A local part sorts after none; a number in it after any word.
        local = (-1,) if self.local is None else (0,) + tuple(
            (1, p, '') if isinstance(p, int) else (0, 0, p) for p in self.local)
        return (self.epoch, tuple(release), pre, post, dev, local)

    def _with(self, **parts):
        v = object.__new__(Version)
        for name in Version.__slots__[:-1]:
            setattr(v, name, parts.get(name, getattr(self, name)))
        v._key = v._order()
        return v

    @property
    def public(self):
        return self._with(local=None)

    @property
    def base_version(self):
        return self._with(pre=None, post=None, dev=None, local=None)

    @property
    def is_prerelease(self):
        return self.pre is not None or self.dev is not None

    @property
    def is_postrelease(self):
        return self.post is not None

    def __str__(self):
        s = f'{self.epoch}!' if self.epoch else ''
        s += '.'.join(map(str, self.release))
        if self.pre is not None:
            s += f'{self.pre[0]}{self.pre[1]}'
        if self.post is not None:
            s += f'.post{self.post}'
        if self.dev is not None:
            s += f'.dev{self.dev}'
        if self.local is not None:
            s += '+' + '.'.join(map(str, self.local))
        return s

    def __repr__(self):
        return f'<Version({str(self)!r})>'

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other):
        return self._key < other._key

    def __le__(self, other):
        return self._key <= other._key

    def __gt__(self, other):
        return self._key > other._key

    def __ge__(self, other):
        return self._key >= other._key


def _prefix_of(v, epoch, release):
    # packaging's prefix match (==1.2.*): the same epoch, and v's release,
    # padded with zeros, starting with release; v's suffixes do not count.
    mine = v.release + (0,) * (len(release) - len(v.release))
    return v.epoch == epoch and mine[:len(release)] == release


class Specifier:
    """One PEP 440 version specifier (">=1.0", "==1.2.*", "~=2.2"), which
    contains a Version as packaging's Specifier.contains(v,
    prereleases=True) does; ValueError for one that is not valid."""

    __slots__ = ('op', 'text', 'version', 'prefix', 'prereleases')

    def __init__(self, text):
        m = re.fullmatch(r'\s*(===|~=|==|!=|<=|>=|<|>)\s*([^\s;)]*)\s*', text)
        if m is None or (not m[2] and m[1] != '==='):
            raise ValueError(f'Invalid specifier: {text!r}')
        self.op, self.text = m[1], m[2]
        self.prefix = self.op in ('==', '!=') and self.text.endswith('.*')
        self.version = None
        if self.op == '===':
            try:
                self.version = Version(self.text)  # only for prereleases below
            except ValueError:
                pass
        else:
            v = Version(self.text[:-2] if self.prefix else self.text)
            if ((self.prefix and (v.pre or v.post is not None or v.dev is not None or v.local))
                    or (v.local and self.op not in ('==', '!='))
                    or (self.op == '~=' and len(v.release) < 2)):
                raise ValueError(f'Invalid specifier: {text!r}')
            self.version = v
        # As packaging: an inclusive specifier of a pre-release lets
        # pre-releases in.
        self.prereleases = (self.op in ('==', '>=', '<=', '~=', '===') and not self.prefix
                            and self.version is not None and self.version.is_prerelease)

    def __str__(self):
        return self.op + self.text

    def contains(self, v):
        op, spec = self.op, self.version
        if op == '===':
            return str(v).lower() == self.text.lower()
        if op in ('==', '!='):
            if self.prefix:
                equal = _prefix_of(v, spec.epoch, spec.release)
            else:
                equal = (v if spec.local else v.public) == spec
            return equal == (op == '==')
        if op == '<=':
            return v.public <= spec
        if op == '>=':
            return v.public >= spec
        if op == '~=':
            return v.public >= spec and _prefix_of(v, spec.epoch, spec.release[:-1])
        same_base = v.base_version == spec.base_version
        if op == '<':
            # <3.0 does not take 3.0rc1, unless it names a pre-release.
            return v < spec and not (not spec.is_prerelease and v.is_prerelease and same_base)
        # >3.0 takes neither 3.0.post1 (unless it names one) nor 3.0+local.
        return v > spec and not (not spec.is_postrelease and v.is_postrelease and same_base) \
            and not (v.local is not None and same_base)


# ------------------------------------------------------------ markers
_MARKER_TOKEN = re.compile(r'''\s*(?:
    (?P<str>'[^']*'|"[^"]*")
    |(?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)
    |(?P<bool>and\b|or\b)
    |(?P<paren>[()])
    |(?P<var>[A-Za-z_][A-Za-z0-9_.]*))''', re.VERBOSE)
_STRING_OPS = {'in': lambda a, b: a in b, 'not in': lambda a, b: a not in b,
               '==': lambda a, b: a == b, '!=': lambda a, b: a != b,
               '<': lambda a, b: a < b, '<=': lambda a, b: a <= b,
               '>': lambda a, b: a > b, '>=': lambda a, b: a >= b}
_environment = {}


def marker_environment():
    """PEP 508's marker variables for this interpreter, no extra."""
    if not _environment:
        import platform
        impl = sys.implementation.version
        iver = f'{impl.major}.{impl.minor}.{impl.micro}'
        if impl.releaselevel != 'final':
            iver += impl.releaselevel[0] + str(impl.serial)
        _environment.update(
            implementation_name=sys.implementation.name, implementation_version=iver,
            os_name=os.name, platform_machine=platform.machine(),
            platform_release=platform.release(), platform_system=platform.system(),
            platform_version=platform.version(), python_full_version=platform.python_version(),
            platform_python_implementation=platform.python_implementation(),
            python_version='.'.join(platform.python_version_tuple()[:2]),
            sys_platform=sys.platform, extra='')
    return _environment


def _marker_tokens(text):
    tokens, at = [], 0
    while text[at:].strip():
        m = _MARKER_TOKEN.match(text, at)
        if m is None:
            raise ValueError(f'Invalid marker: {text!r}')
        kind = m.lastgroup
        value = m[kind]
        tokens.append((kind, ' '.join(value.split()) if kind == 'op' else value))
        at = m.end()
    return tokens


def evaluate_marker(text):
    """The fallback for packaging.markers.Marker(text).evaluate() with no
    extra: True or False; ValueError for a marker that is not valid."""
    tokens, env = _marker_tokens(text), marker_environment()
    at = [0]

    def peek():
        return tokens[at[0]] if at[0] < len(tokens) else (None, None)

    def take(kind):
        token = peek()
        if token[0] != kind:
            raise ValueError(f'Invalid marker: {text!r}')
        at[0] += 1
        return token[1]

    def value():
        kind, v = peek()
        if kind == 'str':
            at[0] += 1
            return v[1:-1]
        name = take('var')
        if name not in env:
            raise ValueError(f'Invalid marker: {text!r} (no variable {name!r})')
        return env[name]

    def atom():
        if peek() == ('paren', '('):
            at[0] += 1
            result = either()
            take('paren')
            return result
        left = value()
        op = take('op')
        return _compare(left, op, value())

    def both():
        result = atom()
        while peek() == ('bool', 'and'):
            at[0] += 1
            result = atom() and result
        return result

    def either():
        result = both()
        while peek() == ('bool', 'or'):
            at[0] += 1
            result = both() or result
        return result

    result = either()
    if at[0] != len(tokens):
        raise ValueError(f'Invalid marker: {text!r}')
    return result


def _compare(left, op, right):
    # As packaging's _eval_op: a version comparison when the right side
    # makes a specifier with op and the left side is a version, else
    # Python's on the strings.
    if op not in ('in', 'not in'):
        try:
            return Specifier(op + right).contains(Version(left))
        except ValueError:
            pass
    if op not in _STRING_OPS:
        raise ValueError(f'{op!r} does not compare {left!r} and {right!r}')
    return _STRING_OPS[op](left, right)


class _Fallback:
    """The versions, specifiers and markers of this module."""
    name = 'fallback'
    version = Version
    specifier = Specifier
    marker = staticmethod(evaluate_marker)


class _Packaging:
    """The same through packaging, whose errors are all ValueErrors."""
    name = 'packaging'

    def __init__(self):
        from packaging.markers import Marker
        from packaging.specifiers import Specifier as Spec
        from packaging.version import Version as Ver
        self.version, self._spec, self._marker = Ver, Spec, Marker

    def specifier(self, text):
        return _PackagingSpecifier(self._spec(text))

    def marker(self, text):
        return self._marker(text).evaluate({'extra': ''})


class _PackagingSpecifier:
    __slots__ = ('_spec', 'prereleases')

    def __init__(self, spec):
        self._spec = spec
        try:
            self.prereleases = bool(spec.prereleases)
        except ValueError:  # '===' of no PEP 440 version
            self.prereleases = False

    def __str__(self):
        return str(self._spec)

    def contains(self, v):
        return self._spec.contains(v, prereleases=True)


_backend = []


def backend():
    """_Packaging if packaging imports (once per process), else _Fallback."""
    if not _backend:
        try:
            _backend.append(_Packaging())
        except Exception:  # not installed, or not in the signed manifest
            _backend.append(_Fallback)
    return _backend[0]


def parse_version(text):
    """text as the backend's version, or None if it is no PEP 440 one."""
    try:
        return backend().version(text)
    except (ValueError, TypeError):
        return None


# -------------------------------------------------------- requirements
_NAME = r'[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?'
_REQUIREMENT = re.compile(rf'''\s*(?P<name>{_NAME})\s*
    (?:\[(?P<extras>[^\]]*)\]\s*)?
    (?:@\s*(?P<url>[^\s;]+)\s*)?
    (?P<specs>[^;@]*?)\s*
    (?:;\s*(?P<marker>.*?)\s*)?$''', re.VERBOSE | re.DOTALL)


class Requirement:
    """A PEP 508 requirement: name, its canonical key, extras, the
    specifiers, marker and URL; ValueError for one that is not valid."""

    __slots__ = ('name', 'key', 'extras', 'specs', 'marker', 'url')

    def __init__(self, text):
        m = _REQUIREMENT.fullmatch(text)
        if m is None:
            raise ValueError(f'Invalid requirement: {text!r}')
        self.name, self.key = m['name'], canonical(m['name'])
        self.extras = tuple(e.strip() for e in (m['extras'] or '').split(',') if e.strip())
        if not all(re.fullmatch(_NAME, e) for e in self.extras):
            raise ValueError(f'Invalid requirement: {text!r}')
        self.url, self.marker = m['url'], m['marker']
        specs = m['specs']
        if specs.startswith('(') and specs.endswith(')'):
            specs = specs[1:-1]
        if self.url and specs.strip():
            raise ValueError(f'Invalid requirement: {text!r}')
        b = backend()
        self.specs = tuple(b.specifier(s) for s in specs.split(',')) if specs.strip() else ()
        if self.marker is not None and not self.marker:
            raise ValueError(f'Invalid requirement: {text!r}')

    def __str__(self):
        extras = f'[{",".join(self.extras)}]' if self.extras else ''
        if self.url:
            return f'{self.name}{extras} @ {self.url}'
        return self.name + extras + ','.join(map(str, self.specs))

    def contains(self, v):
        return all(s.contains(v) for s in self.specs)

    def applies(self):
        """Whether the marker holds here (True without one); ValueError if
        it cannot be evaluated."""
        return self.marker is None or backend().marker(self.marker)


def _requirement(text, where=''):
    try:
        return Requirement(text)
    except ValueError:
        hint = ''
        if re.search(r'[^=!<>~]=[^=]', text):
            hint = ' (= is not a valid operator. Did you mean == ?)'
        raise _Error(f'ERROR: Invalid requirement: {text!r}{hint}{where}') from None


# ------------------------------------------------- installed packages
class Dist:
    """An installed distribution: its name, canonical key, version text,
    location (the directory holding its metadata) and metadata."""

    __slots__ = ('name', 'key', 'version', 'location', 'meta')

    def __init__(self, name, version, location, meta):
        self.name, self.key, self.version = name, canonical(name), version
        self.location, self.meta = location, meta

    def requires(self):
        """The requirements it needs, with no extra, where its markers
        hold."""
        needed = []
        for text in self.meta.requires or ():
            try:
                r = Requirement(text)
                if r.applies():
                    needed.append(r)
            except ValueError:
                pass
        return needed


def installed():
    """{key: Dist} of the distributions on sys.path, the first of each
    name as import finds it (the session's site directory is there once
    it has packages)."""
    from importlib import metadata
    found = {}
    for d in metadata.distributions(path=list(sys.path)):
        try:
            name = d.metadata['Name']
            if not name or canonical(name) in found:
                continue
            location = str(d.locate_file(''))
            found[canonical(name)] = Dist(name, d.version, location, d)
        except Exception:  # broken metadata: pip skips it too
            continue
    return found


def installed_text(dists=None):
    """'name version, ...' of the installed distributions, by name."""
    dists = installed() if dists is None else dists
    return ', '.join(f'{d.name} {d.version}' for d in sorted(dists.values(), key=lambda d: d.key))


# --------------------------------------------------------- the host
def _ask(op, arg=''):
    # (status, text) from the host; outside a worker no host installs.
    ask = getattr(_ci, 'host_install', None)
    if ask is None:
        return 'refused', NO_WHEELHOUSE
    status, text = ask(op, arg)
    if status == 'stopped':
        raise KeyboardInterrupt
    return status, text


class Wheelhouse:
    """The host's listing: site (the directory it installs into), and
    {key: [(version, wheel), ...]} in version order, each wheel the
    listing's {"file", "name", "version", "requires"}."""

    def __init__(self, listing, warn):
        self.site = listing['site']
        self.wheels = {}
        for w in listing['wheels']:
            v = parse_version(w['version'])
            if v is None:
                warn(f"WARNING: the wheelhouse's {w['file']} has the version {w['version']!r},"
                     ' which is not a PEP 440 version: skipped')
                continue
            self.wheels.setdefault(canonical(w['name']), []).append((v, w))
        for versions in self.wheels.values():
            versions.sort(key=lambda c: c[0])

    def offers(self):
        """What it has: 'a 1.0; b 1.0, 2.0' (the first 100 names)."""
        keys = sorted(self.wheels)
        shown = '; '.join(f"{self.wheels[k][0][1]['name']} "
                          + ', '.join(w['version'] for _, w in self.wheels[k]) for k in keys[:100])
        if len(keys) > 100:
            shown += f'; and {len(keys) - 100} more'
        if not keys:
            return "The session's wheelhouse is empty."
        return f"The session's wheelhouse offers: {shown}"

    def by_file(self, file):
        for versions in self.wheels.values():
            for _, w in versions:
                if w['file'] == file:
                    return w
        return None


def wheelhouse(warn):
    """The session's Wheelhouse, or None when it has none; _Error if the
    host could not list it."""
    status, text = _ask('list')
    if status == 'refused':
        return None
    if status != 'done':
        raise _Error(f"ERROR: the host could not list the session's wheelhouse: {text}")
    return Wheelhouse(json.loads(text), warn)


def use_site(site):
    """Makes what was installed into site importable on the next line:
    site at the end of sys.path (once), the import system's caches of
    directories dropped, and a None that a path hook left for site (a
    directory that did not exist yet) forgotten."""
    import importlib
    if site not in sys.path:
        sys.path.append(site)
    if site in sys.path_importer_cache and sys.path_importer_cache[site] is None:
        del sys.path_importer_cache[site]
    # (importlib.metadata looks again at a directory whose mtime changed.)
    importlib.invalidate_caches()


# --------------------------------------------------------- resolving
class _Retry(Exception):
    """A requirement that the version chosen earlier in the pass does not
    meet: the pass starts again knowing it."""

    def __init__(self, key, need):
        self.key, self.need = key, need


class _NoWheelhouse(Exception):
    pass


class Plan:
    """What install will do: events (('collect', req, parent) or
    ('satisfied', req, parent, dist)) in pip's order, and the wheels to
    install, dependencies first."""

    def __init__(self, events, wheels):
        self.events, self.wheels = events, wheels


def _label(w):
    return f"{w['name']}=={w['version']}"


def _needs_text(needs):
    return '\n'.join(f'    The user requested {r}' if p is None else
                     f'    The user requested (constraint) {r}' if p == 'constraint' else
                     f"    {p.replace('==', ' ', 1)} depends on {r}" for r, p in needs)


def _from(parent):
    return '' if parent is None or parent == 'constraint' else f' (from {parent})'


def _pick(key, needs, house, dists, pre, top):
    # The installed distribution if it meets every need; else the
    # highest version of the wheelhouse that does, a final release
    # unless a need names a pre-release, --pre, or only pre-releases
    # match (packaging's filter); else why none.
    dist = dists.get(key)
    if dist is not None:
        v = parse_version(dist.version)
        for r, parent in needs:
            if r.specs and (v is None or not r.contains(v)):
                raise _Error(f'ERROR: Cannot install {r}{_from(parent)}: {dist.name} {dist.version}'
                             f' is installed (in {dist.location}), and this session cannot'
                             ' uninstall or replace an installed package')
        return ('installed', dist)
    if house is None:
        raise _NoWheelhouse
    versions = house.wheels.get(key, [])
    fits = [c for c in versions if all(r.contains(c[0]) for r, _ in needs)]
    allow_pre = pre or any(s.prereleases for r, _ in needs for s in r.specs)
    final = [c for c in fits if allow_pre or not c[0].is_prerelease]
    if fits:
        return ('wheel',) + (final or fits)[-1]
    listed = ', '.join(w['version'] for _, w in versions) or 'none'
    for r, parent in needs:
        if not any(r.contains(v) for v, _ in versions):
            lines = [f'ERROR: Could not find a version that satisfies the requirement'
                     f' {r}{_from(parent)} (from versions: {listed})',
                     f'ERROR: No matching distribution found for {r}']
            close = '' if versions else _close_names(key, house)
            if close:
                lines.append(f'Did you mean {close}?')
            raise _Error(*lines, house.offers())
    names = [str(r) for r in top]
    asked = ', '.join(names[:-1]) + ' and ' + names[-1] if len(names) > 1 else names[0]
    raise _Error(f'ERROR: Cannot install {asked} because these package versions have'
                 ' conflicting dependencies.',
                 'The conflict is caused by:\n' + _needs_text(needs),
                 f"The wheelhouse has {versions[0][1]['name']} {listed}.",
                 f'ERROR: ResolutionImpossible: no version of {versions[0][1]["name"]}'
                 ' meets all of them')


def _close_names(key, house):
    import difflib
    names = {k: house.wheels[k][0][1]['name'] for k in house.wheels}
    return ' or '.join(names[k] for k in difflib.get_close_matches(key, list(names), 3, 0.75))


def _resolve_pass(top, house, dists, hints, options):
    chosen, needs, events, deps, order = {}, {}, [], {}, []
    queue = [(r, None) for r in top]
    constraints = options.get('constraints', {})
    for req, parent in queue:  # the queue grows as it is read: breadth first
        k = req.key
        needs.setdefault(k, []).append((req, parent))
        if k in chosen:
            kind = chosen[k][0]
            v = parse_version(chosen[k][1].version) if kind == 'installed' else chosen[k][1]
            if req.specs and (v is None or not req.contains(v)):
                raise _Retry(k, (req, parent))
            continue
        # What an earlier pass learnt, unless this one asked it already.
        asked = {(str(r), p) for r, p in needs[k]}
        wants = needs[k] + [h for h in hints.get(k, ()) if (str(h[0]), h[1]) not in asked]
        pick = chosen[k] = _pick(k, wants + constraints.get(k, []), house, dists,
                                 options.get('pre'), top)
        if pick[0] == 'installed':
            events.append(('satisfied', req, parent, pick[1]))
            continue
        events.append(('collect', req, parent))
        order.append(k)
        deps[k] = []
        if options.get('no_deps'):
            continue
        wheel = pick[2]
        for text in wheel['requires']:
            dep = _requirement(text, f" (listed as a requirement of {wheel['file']})")
            queue.append((dep, _label(wheel)))
            deps[k].append(dep.key)
    return Plan(events, [chosen[k][2] for k in _dependencies_first(order, deps)])


def _dependencies_first(order, deps):
    # The keys of order, each after those it depends on (a cycle is cut
    # where it closes), else in the order they were found.
    done, out = set(), []
    for root in order:
        stack = [(root, iter(deps[root]))]
        seen = {root}
        while stack:
            k, it = stack[-1]
            dep = next((d for d in it if d in deps and d not in done and d not in seen), None)
            if dep is None:
                stack.pop()
                if k not in done:
                    done.add(k)
                    out.append(k)
            else:
                seen.add(dep)
                stack.append((dep, iter(deps[dep])))
    return out


def resolve(top, house, dists, options):
    """The Plan that installs the requirements top (with a parent of None)
    from house, leaving dists (installed(): {key: Dist}) as they are.
    options: 'no_deps', 'pre', 'constraints' ({key: [(req,
    'constraint')]}). _Error for what cannot be; _NoWheelhouse when house
    is None and something is not installed."""
    hints = {}
    for _ in range(200):
        try:
            return _resolve_pass(top, house, dists, hints, options)
        except _Retry as again:
            hints.setdefault(again.key, []).append(again.need)
    raise _Error('ERROR: ResolutionTooDeep: the requirements did not settle after 200 rounds')


# --------------------------------------------------------- the output
class _Output:
    """pip's levels: -q hides what it says, -qq its warnings too, -qqq
    its errors; -v cancels a -q."""

    def __init__(self, quiet=0):
        self.quiet = quiet

    def info(self, text):
        if self.quiet < 1:
            print(text, file=sys.stdout)

    def warn(self, text):
        if self.quiet < 2:
            print(text, file=sys.stderr)

    def error(self, text):
        if self.quiet < 3:
            print(text, file=sys.stderr)


# --------------------------------------------------------- options
# Each option: (the key it sets or None, how): 'count', 'true', 'value',
# 'append', 'skip' (no effect here), 'skip=' (its value too), 'index='
# (a source besides the wheelhouse: ignored with a warning), 'refuse',
# 'refuse=' (what the session cannot do: an error).
_GENERAL = {
    '-h': ('help', 'true'), '--help': ('help', 'true'),
    '-q': ('quiet', 'count'), '--quiet': ('quiet', 'count'),
    '-v': ('verbose', 'count'), '--verbose': ('verbose', 'count'),
    '--isolated': (None, 'skip'), '--require-virtualenv': (None, 'skip'),
    '--no-color': (None, 'skip'), '--no-input': (None, 'skip'), '--debug': (None, 'skip'),
    '--no-cache-dir': (None, 'skip'), '--disable-pip-version-check': (None, 'skip'),
    '--no-python-version-warning': (None, 'skip'),
    '--cache-dir': (None, 'skip='), '--log': (None, 'skip='), '--timeout': (None, 'skip='),
    '--retries': (None, 'skip='), '--exists-action': (None, 'skip='), '--cert': (None, 'skip='),
    '--client-cert': (None, 'skip='), '--use-feature': (None, 'skip='),
    '--use-deprecated': (None, 'skip='), '--root-user-action': (None, 'skip='),
    '--keyring-provider': (None, 'skip='),
    '--proxy': (None, 'index='), '--trusted-host': (None, 'index='),
    '--python': (None, 'refuse='),
}
_INDEX = {'-i': (None, 'index='), '--index-url': (None, 'index='),
          '--extra-index-url': (None, 'index='), '-f': (None, 'index='),
          '--find-links': (None, 'index='), '--no-index': (None, 'skip')}
_INSTALL = dict(_GENERAL, **_INDEX, **{
    '-r': ('requirements', 'append'), '--requirement': ('requirements', 'append'),
    '-c': ('constraints', 'append'), '--constraint': ('constraints', 'append'),
    '--no-deps': ('no_deps', 'true'), '--pre': ('pre', 'true'), '--dry-run': ('dry_run', 'true'),
    '-U': (None, 'skip'), '--upgrade': (None, 'skip'), '--upgrade-strategy': (None, 'skip='),
    '--force-reinstall': ('replace', 'true'), '-I': ('replace', 'true'),
    '--ignore-installed': ('replace', 'true'),
    '--user': (None, 'skip'), '--no-warn-script-location': (None, 'skip'),
    '--no-warn-conflicts': (None, 'skip'), '--no-build-isolation': (None, 'skip'),
    '--use-pep517': (None, 'skip'), '--no-use-pep517': (None, 'skip'),
    '--compile': (None, 'skip'), '--no-compile': (None, 'skip'), '--no-clean': (None, 'skip'),
    '--prefer-binary': (None, 'skip'), '--break-system-packages': (None, 'skip'),
    '--require-hashes': (None, 'skip'), '--ignore-requires-python': (None, 'skip'),
    '--check-build-dependencies': (None, 'skip'),
    '--progress-bar': (None, 'skip='), '--only-binary': (None, 'skip='),
    '--no-binary': (None, 'skip='), '--config-settings': (None, 'skip='),
    '-C': (None, 'skip='), '--global-option': (None, 'skip='), '--report': (None, 'skip='),
    '-e': (None, 'refuse='), '--editable': (None, 'refuse='), '-t': (None, 'refuse='),
    '--target': (None, 'refuse='), '--prefix': (None, 'refuse='), '--root': (None, 'refuse='),
    '--src': (None, 'refuse='), '--platform': (None, 'refuse='),
    '--python-version': (None, 'refuse='), '--implementation': (None, 'refuse='),
    '--abi': (None, 'refuse='),
})
_LIST = dict(_GENERAL, **_INDEX, **{
    '-o': ('outdated', 'true'), '--outdated': ('outdated', 'true'),
    '-u': ('outdated', 'true'), '--uptodate': ('outdated', 'true'),
    '-e': ('editable', 'true'), '--editable': ('editable', 'true'),
    '-l': (None, 'skip'), '--local': (None, 'skip'), '--user': (None, 'skip'),
    '--path': (None, 'skip='), '--pre': (None, 'skip'), '--format': ('format', 'value'),
    '--not-required': ('not_required', 'true'), '--exclude-editable': (None, 'skip'),
    '--include-editable': (None, 'skip'), '--exclude': ('exclude', 'append'),
})
_FREEZE = dict(_GENERAL, **{
    '-r': (None, 'skip='), '--requirement': (None, 'skip='), '-l': (None, 'skip'),
    '--local': (None, 'skip'), '--user': (None, 'skip'), '--path': (None, 'skip='),
    '--all': ('all', 'true'), '--exclude-editable': (None, 'skip'),
    '--exclude': ('exclude', 'append'),
})
_SHOW = dict(_GENERAL, **{'-f': ('files', 'true'), '--files': ('files', 'true')})
# A line of a requirements file may carry these after its requirement.
_PER_REQUIREMENT = {'--hash': ('hash', 'append'), '--config-settings': (None, 'skip='),
                    '-C': (None, 'skip='), '--global-option': (None, 'skip=')}
_USAGE = {
    'install': ['pip install [options] <requirement specifier> ...',
                'pip install [options] -r <requirements file> ...'],
    'list': ['pip list [options]'], 'freeze': ['pip freeze [options]'],
    'show': ['pip show [options] <package> ...'],
}


def _takes(entry):
    return entry is not None and (entry[1].endswith('=') or entry[1] in ('value', 'append'))


def _parse(args, table, command):
    """(options, positional arguments) of args by table, as optparse
    reads pip's: options anywhere, -qU for -q -U, -rFILE and --opt=VALUE;
    _Usage or _Error for an option it does not take."""
    opts, rest, args = {}, [], list(args)
    while args:
        a = args.pop(0)
        if a == '--':
            rest.extend(args)
            break
        if not a.startswith('-') or a == '-':
            rest.append(a)
            continue
        if a.startswith('--'):
            pairs = [a.partition('=')]
        else:
            pairs = []
            for i in range(1, len(a)):
                pairs.append(('-' + a[i], '', ''))
                if _takes(table.get('-' + a[i])):
                    if a[i + 1:]:
                        pairs[-1] = ('-' + a[i], '=', a[i + 1:])
                    break
        for name, eq, value in pairs:
            entry = table.get(name)
            if entry is None:
                raise _Usage(command, f'no such option: {name}')
            if _takes(entry) and not eq:
                if not args:
                    raise _Usage(command, f'{name} option requires 1 argument')
                value = args.pop(0)
            elif eq and not _takes(entry):
                raise _Usage(command, f'{name} option does not take a value')
            _store(opts, name, entry[0], entry[1], value)
    return opts, rest


def _store(opts, name, key, how, value):
    if how == 'count':
        opts[key] = opts.get(key, 0) + 1
    elif how == 'true':
        opts[key] = True
    elif how == 'value':
        opts[key] = value
    elif how == 'append':
        opts.setdefault(key, []).append(value)
    elif how == 'index=':
        opts.setdefault('ignored', []).append(name)
    elif how.startswith('refuse'):
        raise _Error(f'ERROR: {name} is not available here: {_SITE_ONLY}')


# ---------------------------------------------------------- commands
def _requirements_file(path, seen, into):
    # The requirements of a requirements file (pip's format: one a line,
    # '#' comments, '\' continuations, options such as -r, -c and
    # --hash), added to into: {'requirements': [...], 'constraints':
    # [...], ...}. Paths in it are relative to its directory.
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError as e:
        raise _Error(f'ERROR: Could not open requirements file: {e}') from None
    text = re.sub(r'\\\n', '', text)
    for number, line in enumerate(text.splitlines(), 1):
        line = re.sub(r'(^|\s)#.*$', '', line).strip()
        if not line:
            continue
        where = f' (from line {number} of {path})'
        if line.startswith('-'):
            try:
                opts, _ = _parse(shlex.split(line), _INSTALL, 'install')
            except _Usage as e:
                raise _Error(f'ERROR: {e.args[1]}{where}') from None
            for name in ('requirements', 'constraints'):
                for p in opts.pop(name, ()):
                    p = os.path.join(os.path.dirname(path), p)
                    sub = into if name == 'requirements' else {'requirements': []}
                    _requirements_file(p, seen, sub)
                    if name == 'constraints':
                        into.setdefault('constraints', []).extend(sub['requirements'])
            for name, value in opts.items():
                into[name] = into.get(name, []) + value if isinstance(value, list) else value
            continue
        words = line.split(' --', 1)
        if len(words) > 1:
            try:
                opts, _ = _parse(shlex.split('--' + words[1]), _PER_REQUIREMENT, 'install')
            except _Usage as e:
                raise _Error(f'ERROR: {e.args[1]}{where}') from None
            if opts.get('hash'):
                into['hashes'] = True
        into['requirements'].append((words[0].strip(), where))


def _top_requirements(texts, out, house):
    # The Requirements asked for, each checked to be one the wheelhouse
    # can serve; those whose marker does not hold are left out, as pip
    # says.
    top = []
    for text, where in texts:
        if '://' in text or os.sep in text or text.endswith(('.whl', '.zip', '.tar.gz')):
            hint = ''
            w = house.by_file(os.path.basename(text)) if house else None
            if w is not None:
                hint = f" (the wheelhouse lists it: %pip install {w['name']}=={w['version']})"
            raise _Error(f'ERROR: cannot install {text}{where}: {_SITE_ONLY}, by name,'
                         f' not from a file or a URL{hint}')
        req = _requirement(text, where)
        if req.url:
            raise _Error(f'ERROR: cannot install {req}{where}: {_SITE_ONLY}, by name,'
                         ' not from a URL')
        try:
            applies = req.applies()
        except ValueError as e:
            raise _Error(f'ERROR: Invalid requirement: {text!r}{where}: {e}') from None
        if not applies:
            out.info(f"Ignoring {req.name}: markers '{req.marker}' don't match your environment")
            continue
        if req.extras:
            out.warn(f'WARNING: the extras of {req} are not installed: the wheelhouse lists only'
                     ' the dependencies that need no extra')
        top.append(req)
    return top


def _install(opts, args, out):
    texts = [(a, '') for a in args]
    into = {'requirements': texts, 'constraints': []}
    seen = set()
    for path in opts.get('requirements', ()):
        _requirements_file(path, seen, into)
    for path in opts.get('constraints', ()):
        sub = {'requirements': []}
        _requirements_file(path, seen, sub)
        into['constraints'].extend(sub['requirements'])
    opts.update((k, v) for k, v in into.items() if k not in ('requirements', 'constraints'))
    if not texts:
        raise _Error('ERROR: You must give at least one requirement to install'
                     ' (see "pip help install")')
    house = wheelhouse(out.warn)
    if opts.get('ignored'):
        out.warn(f"WARNING: {', '.join(sorted(set(opts['ignored'])))} ignored: {_SITE_ONLY}")
    if opts.get('replace'):
        out.warn('WARNING: --force-reinstall and --ignore-installed are ignored: this session'
                 ' cannot uninstall or replace an installed package')
    if opts.get('hashes'):
        out.warn("WARNING: --hash is not checked here: the host checks each wheel against the"
                 " SHA-256 that the session's signed package manifest lists")
    top = _top_requirements(texts, out, house)
    constraints = {}
    for text, where in into['constraints']:
        c = _requirement(text, where)
        constraints.setdefault(c.key, []).append((c, 'constraint'))
    dists = installed()
    try:
        plan = resolve(top, house, dists, {'no_deps': opts.get('no_deps'), 'pre': opts.get('pre'),
                                           'constraints': constraints})
    except _NoWheelhouse:
        raise _Error(f'ERROR: {NO_WHEELHOUSE}; these are installed: {installed_text(dists)}')
    if house is not None and plan.wheels:
        out.info("Looking in the session's wheelhouse")
    for event in plan.events:
        if event[0] == 'collect':
            out.info(f'Collecting {event[1]}{_from(event[2])}')
        else:
            req, parent, dist = event[1:]
            out.info(f'Requirement already satisfied: {req} in {dist.location}{_from(parent)}'
                     f' ({dist.version})')
    if not plan.wheels:
        return 0
    names = ' '.join(f"{w['name']}-{w['version']}" for w in plan.wheels)
    if opts.get('dry_run'):
        out.info(f'Would install {names}')
        return 0
    out.info('Installing collected packages: ' + ', '.join(w['name'] for w in plan.wheels))
    done = []
    try:
        for w in plan.wheels:
            status, text = _ask('wheel', w['file'])
            if status != 'done':
                how = 'refused' if status == 'refused' else 'could not install'
                lines = [f"ERROR: Could not install {w['name']} {w['version']} ({w['file']}):"
                         f' the host {how} it: {text}']
                if done:
                    lines.append('Installed before it: ' + ' '.join(done))
                raise _Error(*lines)
            reply = json.loads(text)
            done.append(f"{reply.get('installed', w['name'])}-{reply.get('version', w['version'])}")
    finally:
        if done:
            use_site(house.site)
    out.info('Successfully installed ' + ' '.join(done))
    return 0


def _table(rows):
    # pip's columns: each as wide as its widest cell, a line of dashes
    # under the header.
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    rows = [rows[0], ['-' * w for w in widths]] + rows[1:]
    return '\n'.join(' '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _required_by(dists):
    # {key: names of the installed distributions that need it}
    needed = {}
    for d in dists.values():
        for r in d.requires():
            needed.setdefault(r.key, set()).add(d.name)
    return needed


def _installer(d):
    try:
        return (d.meta.read_text('INSTALLER') or '').strip()
    except Exception:
        return ''


def _list(opts, args, out):
    if opts.get('outdated'):
        raise _Error('ERROR: pip list --outdated and --uptodate need a package index, and this'
                     ' sandbox has no network; %pip install installs from the wheelhouse')
    dists = installed()
    chosen = sorted(dists.values(), key=lambda d: d.key)
    exclude = {canonical(n) for n in opts.get('exclude', ())}
    chosen = [d for d in chosen if d.key not in exclude and not opts.get('editable')]
    if opts.get('not_required'):
        needed = _required_by(dists)
        chosen = [d for d in chosen if d.key not in needed]
    fmt, verbose = opts.get('format', 'columns'), opts.get('verbose', 0) > 0
    if fmt == 'freeze':
        if chosen:
            out.info('\n'.join(f'{d.name}=={d.version}' for d in chosen))
    elif fmt == 'json':
        rows = [dict(name=d.name, version=d.version, **(
            {'location': d.location, 'installer': _installer(d)} if verbose else {}))
            for d in chosen]
        out.info(json.dumps(rows))
    elif fmt == 'columns':
        if chosen:
            head = ['Package', 'Version'] + (['Location', 'Installer'] if verbose else [])
            out.info(_table([head] + [[d.name, d.version] + (
                [d.location, _installer(d)] if verbose else []) for d in chosen]))
    else:
        raise _Usage('list', f"option --format: invalid choice: '{fmt}'"
                             " (choose from 'columns', 'freeze', 'json')")
    return 0


def _freeze(opts, args, out):
    exclude = {canonical(n) for n in opts.get('exclude', ())}
    if not opts.get('all'):
        exclude |= _FREEZE_HIDDEN
    dists = sorted(installed().values(), key=lambda d: d.name.lower())
    lines = [f'{d.name}=={d.version}' for d in dists if d.key not in exclude]
    if lines:
        out.info('\n'.join(lines))
    return 0


def _show(opts, args, out):
    if not args:
        raise _Error('ERROR: Please provide a package name or names.')
    dists = installed()
    needed = _required_by(dists)
    blocks, missing = [], []
    for name in args:
        d = dists.get(canonical(name))
        if d is None:
            missing.append(name)
            continue
        m = d.meta.metadata
        lines = [f'Name: {d.name}', f'Version: {d.version}']
        for field in ('Summary', 'Home-page', 'Author', 'Author-email', 'License'):
            lines.append(f'{field}: {m.get(field) or ""}')
        requires = sorted({r.name for r in d.requires()}, key=str.lower)
        lines += [f'Location: {d.location}', f'Requires: {", ".join(requires)}',
                  f'Required-by: {", ".join(sorted(needed.get(d.key, ()), key=str.lower))}']
        if opts.get('files'):
            files = d.meta.files
            lines += ['Files:'] + ([f'  {f}' for f in files] if files is not None else [
                'Cannot locate RECORD or installed-files.txt'])
        blocks.append('\n'.join(lines))
    if blocks:
        out.info('\n---\n'.join(blocks))
    if missing:
        out.warn(f'WARNING: Package(s) not found: {", ".join(missing)}')
    return 0 if blocks else 1


def version():
    """The version this pip answers to: the installed pip's, whose
    command line it follows, else 0+codeinterp."""
    try:
        from importlib import metadata
        return metadata.version('pip')
    except Exception:
        return '0+codeinterp'


_HELP = """
Usage:
  pip <command> [options]

Commands (from the session's wheelhouse; no network, no new processes):
  install                     Install packages that the session's wheelhouse lists.
  list                        List installed packages.
  show                        Show information about installed packages.
  freeze                      Output installed packages in requirements format.
  help                        Show help for commands.

Not available in this sandbox: uninstall, download, wheel, search, index and the rest.

General Options:
  -h, --help                  Show help.
  -V, --version               Show version and exit.
  -q, --quiet                 Give less output (up to 3 times).
"""


_TABLES = {'install': _INSTALL, 'list': _LIST, 'freeze': _FREEZE, 'show': _SHOW}
_RUN = {'install': _install, 'list': _list, 'freeze': _freeze, 'show': _show}


def _help(command=None):
    if command in _USAGE:
        return '\nUsage:\n' + ''.join(f'  {u}\n' for u in _USAGE[command])
    return _HELP


def _command(argv):
    # The index of the command in argv, past pip's general options; -V
    # and --version stop there (-1).
    i = 0
    while i < len(argv) and argv[i].startswith('-'):
        if argv[i] in ('-V', '--version'):
            return -1
        i += 2 if _takes(_GENERAL.get(argv[i])) else 1
    return min(i, len(argv))


def run(argv):
    """Runs pip's command line argv (the arguments after 'pip'), printing
    as pip does; returns its status: 0, 1 for an error, 2 for a usage
    error. Raises only KeyboardInterrupt (the cell interrupted)."""
    out = _Output()
    try:
        argv = [str(a) for a in argv]
        i = _command(argv)
        if i < 0:
            out.info(f"pip {version()} from codeinterp (the session's wheelhouse)"
                     f' (python {sys.version_info[0]}.{sys.version_info[1]})')
            return 0
        if i == len(argv):
            _parse(argv, _GENERAL, None)
            out.info(_help().strip('\n'))
            return 0
        command, args = argv[i], argv[:i] + argv[i + 1:]
        if command == 'help':
            out.info(_help(args[0] if args else None).strip('\n'))
            return 0
        if command in _COMMANDS and command not in _USAGE:
            why = _UNAVAILABLE.get(command, f'pip {command} is not available in this sandbox')
            raise _Error(f"ERROR: {why}; what works here is %pip install (from the"
                         " session's wheelhouse), list, freeze and show")
        if command not in _USAGE:
            import difflib
            close = difflib.get_close_matches(command, _COMMANDS, 1)
            maybe = f' - maybe you meant "{close[0]}"' if close else ''
            raise _Error(f'ERROR: unknown command "{command}"{maybe}')
        opts, args = _parse(args, _TABLES[command], command)
        out.quiet = max(0, opts.get('quiet', 0) - opts.get('verbose', 0))
        if opts.get('help'):
            out.info(_help(command).strip('\n'))
            return 0
        return _RUN[command](opts, args, out)
    except _Error as e:
        for line in e.args:
            out.error(line)
        return 1
    except _Usage as e:
        out.error(_help(e.args[0]).rstrip('\n') + f'\n\n{e.args[1]}')
        return 2


def split(line):
    """The words of a command line, as a POSIX shell splits them; _Usage
    for an unclosed quote."""
    try:
        return shlex.split(line, posix=True)
    except ValueError as e:
        raise _Usage(None, f'ERROR: cannot split the command line ({e}): {line}') from None


def magic(line):
    """%pip line: pip's command line after 'pip'. Returns None, as
    IPython's %pip does."""
    try:
        words = split(line)
    except _Usage as e:
        print(e.args[1], file=sys.stderr)
        return None
    run(words)
    return None


# `pip ...`, `pip3 ...`, `pip3.11 ...`, `python -m pip ...` (any path
# before the program, python3 and python3.11 too).
_PROGRAM = re.compile(r'(?:.*/)?(?:pip(?:3(?:\.\d+)?)?|python(?:3(?:\.\d+)?)?)')


def pip_arguments(words):
    """pip's arguments in the words of a command line, or None if it does
    not run pip."""
    if not words or not _PROGRAM.fullmatch(words[0]):
        return None
    if os.path.basename(words[0]).startswith('pip'):
        return words[1:]
    if words[1:2] == ['-m'] and words[2:3] == ['pip']:
        return words[3:]
    if words[1:2] == ['-mpip']:
        return words[2:]
    return None


def system(cmd):
    """!cmd that runs pip: its status, as the shell's exit code. Refused
    (shell.py's refusal of a shell command) for any other command line,
    and for one that would need a shell: a pipe, a redirection, a second
    command."""
    lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        words = None
    args = pip_arguments(words or [])
    if args is None:
        raise Refused(SHELL)
    if any(w and all(c in '();<>|&' for c in w) for w in args):
        raise Refused(f'{SHELL}; pip runs here without a shell: no pipes, redirections or'
                      " other commands (quote a requirement with < or >: !pip install 'x>=1')")
    return run(args)


def captured(cmd):
    """What system(cmd) prints, stdout and stderr together, as IPython's
    getoutput gives a program's output."""
    kept = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = buffer = io.StringIO()
    try:
        system(cmd)
    finally:
        sys.stdout, sys.stderr = kept
    return buffer.getvalue()


# ------------------------------------------------------- import pip
def main(args=None):
    """pip.main(args): runs pip's command line args (a list of str, after
    'pip') from the session's wheelhouse, printing as pip does; returns
    0, 1 for an error, 2 for a usage error."""
    if isinstance(args, str):
        args = shlex.split(args)
    return run(list(args) if args is not None else [])


def fill_shim(module):
    """Makes module the `pip` that a cell imports: main() and __version__.

    Always this one, whether or not pip is installed: the real pip cannot
    work here (no index to reach, no process to start, a site directory
    read-only to the cell), and would fail with pages of network errors
    where this does what the cell asked, from the wheelhouse. pip's
    internals (pip._internal) are not there."""
    module.__doc__ = ("pip's command line from the session's wheelhouse (codeinterp):"
                      ' main(["install", "NAME"]) -> 0 on success')
    module.__version__ = version()
    module.main = main
