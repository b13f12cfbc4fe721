"""The discovery program of codeinterp-manifest create: what is installed.

Run as "<python> -I -c <this> <packages> [<dir>...] [--wheelhouse=DIR]"
under the interpreter the manifest is for (argv: the requested
distributions, comma-separated, then extra directories, and a wheelhouse
to list). It prints one JSON object on stdout:
  {"python", "search_path", "unknown": [requested names not installed],
   "distributions": [{"name", "version", "requires": [names], "files": [paths]}],
   "site_files": [.pth paths], "warnings": [...], "notes": [...],
   "wheels": [{"path", "name", "version", "requires": [requirements]}],
   "bad_wheels": [why a wheel could not be read]}
the standard library first as "python", each path once in the whole
object. The C side (create.c) hashes the files and writes the manifest.
It is embedded in the command at build time (tools/embed.sh), so the
command is one file to install.
"""
import email.parser, glob, json, os, re, subprocess, sys, sysconfig, platform

warnings = []
notes = []

def warn(text):
    warnings.append(text)

def note(text):
    notes.append(text)

def norm(name):
    return re.sub(r'[-_.]+', '-', name).lower()

def regular(p):
    return os.path.isfile(p)

def walk_files(top, skip=()):
    out = []
    for d, dirs, files in os.walk(top):
        if skip:
            dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            if regular(p):
                out.append(p)
    return out

# What the worker itself imports, whatever its preload list: matplotlib
# (figures) and IPython (its shell, lib/worker/shell.py). A session could
# not start on a manifest without them.
WORKER_NEEDS = ('matplotlib', 'ipython')
requested = [n for n in sys.argv[1].split(',')]
for need in WORKER_NEEDS:
    if norm(need) not in {norm(n) for n in requested}:
        requested.append(need)
        note(f'{need}: listed because the worker itself imports it')
extra = [a for a in sys.argv[2:] if not a.startswith('--wheelhouse=')]
wheelhouses = [a[len('--wheelhouse='):] for a in sys.argv[2:] if a.startswith('--wheelhouse=')]

# --path directories come after the standard library (and before the
# site directories): a module there cannot stand in for one CPython
# imports while it starts (encodings), before any import hook exists.
_sp = sysconfig.get_paths()
std = {os.path.normpath(_sp['stdlib']), os.path.normpath(_sp['platstdlib'])}
std |= {os.path.join(d, 'lib-dynload') for d in list(std)}
first = [p for p in sys.path if p and os.path.isabs(p) and os.path.normpath(p) in std]
search = []
for p in first + extra + sys.path:
    if not p or not os.path.isabs(p):
        continue
    p = os.path.normpath(p)
    if os.path.isdir(p) and p not in search:
        search.append(p)

# ---- every distribution in the search path, the first of a name winning
def read_meta(meta):
    f = os.path.join(meta, 'METADATA' if meta.endswith('.dist-info') else 'PKG-INFO')
    if os.path.isfile(meta):
        f = meta
    try:
        with open(f, 'rb') as fh:
            return email.parser.BytesHeaderParser().parse(fh)
    except OSError:
        return None

dists = {}
order = []
for site in search:
    try:
        entries = sorted(os.listdir(site), key=lambda e: (not e.endswith('.dist-info'), e))
    except OSError:
        continue
    for e in entries:
        if not (e.endswith('.dist-info') or e.endswith('.egg-info')):
            continue
        meta = os.path.join(site, e)
        m = read_meta(meta)
        if m is None or not m.get('Name'):
            continue
        name = str(m['Name']).strip()
        key = norm(name)
        if key in dists or key == 'python':
            continue
        dists[key] = {'name': name, 'version': str(m.get('Version', '')).strip() or 'unknown',
                      'site': site, 'meta': meta, 'msg': m}
        order.append(key)

unknown = [n for n in requested if norm(n) not in dists]
# a module name given for a distribution's (yaml for PyYAML): which one
hints = {}
for n in unknown:
    for key in order:
        try:
            with open(os.path.join(dists[key]['meta'], 'top_level.txt')) as fh:
                tops = fh.read().split()
        except OSError:
            continue
        if n in tops:
            hints[n] = dists[key]['name']
            break

# ---- which are Debian's: one dpkg -S for every metadata dir
owner = {}      # dist key -> [debian packages]
pkg_dists = {}  # debian package -> [dist keys]
def run(argv):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return r.stdout.decode('utf-8', 'replace')
    except OSError:
        return None
if dists:
    metas = {dists[k]['meta']: k for k in order}
    out = run(['dpkg-query', '-S'] + list(metas))
    for line in (out or '').splitlines():
        if line.startswith('diversion by') or ': /' not in line:
            continue
        pkgs, path = line.split(': /', 1)
        path = '/' + path
        if path not in metas:
            continue
        key = metas[path]
        for pk in pkgs.split(', '):
            pk = pk.strip().split(':')[0]
            owner.setdefault(key, []).append(pk)
            pkg_dists.setdefault(pk, []).append(key)

depends = {}
if owner:
    pkgs = sorted(pkg_dists)
    out = run(['dpkg-query', '-W', '-f=${Package}\\t${Depends}\\n'] + pkgs)
    for line in (out or '').splitlines():
        if '\t' in line:
            pk, dep = line.split('\t', 1)
            depends[pk] = dep

def debian_requires(key):
    # Debian's Depends, to packages that own a distribution; but not one
    # that the distribution's own metadata names only for an extra
    # (Debian makes some extras hard dependencies: fonttools -> scipy).
    hard, optional = upstream_requires(key)
    found, skipped = [], []
    for pk in owner[key]:
        for clause in depends.get(pk, '').split(','):
            for alt in clause.split('|'):
                dpk = alt.strip().split(' ')[0].split(':')[0]
                if dpk in pkg_dists:
                    for k in pkg_dists[dpk]:
                        if k == key or k in found:
                            continue
                        if k in optional and k not in hard:
                            if k not in skipped:
                                skipped.append(k)
                            continue
                        found.append(k)
                    break
    if skipped:
        note('%s: Debian makes it depend on %s, which it names only as optional extras; not followed '
             '(name them in --packages to list them)'
             % (dists[key]['name'], ', '.join(dists[k]['name'] for k in skipped)))
    return found

# ---- Requires-Dist, with markers
try:
    from packaging.requirements import Requirement
except Exception:
    Requirement = None
    warn('python3-packaging is missing: requirements with environment markers are skipped')

def req_names(lines, who):
    names = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if Requirement is not None:
            try:
                r = Requirement(line)
            except Exception:
                warn('%s: cannot parse requirement %r; skipped' % (who, line))
                continue
            if r.marker is not None and not r.marker.evaluate({'extra': ''}):
                continue
            names.append(r.name)
        else:
            if ';' in line:
                warn('%s: requirement %r has a marker; skipped' % (who, line))
                continue
            m = re.match(r'[A-Za-z0-9][A-Za-z0-9._-]*', line)
            if m:
                names.append(m.group(0))
    return names

def upstream_requires(key):
    # (hard, extra-only) normalised names from the metadata's Requires-Dist
    # and requires.txt, markers not evaluated.
    d = dists[key]
    hard, optional = set(), set()
    lines = [(l, None) for l in (d['msg'].get_all('Requires-Dist') or [])]
    meta = d['meta']
    if meta.endswith('.egg-info') and os.path.isdir(meta):
        try:
            with open(os.path.join(meta, 'requires.txt')) as fh:
                section = ''
                for line in fh:
                    s = line.strip()
                    if s.startswith('['):
                        section = s[1:-1]
                    elif s and not s.startswith('#'):
                        lines.append((s, section.split(':')[0]))
        except OSError:
            pass
    for line, extra_name in lines:
        m = re.match(r'\s*([A-Za-z0-9][A-Za-z0-9._-]*)', line)
        if not m:
            continue
        is_extra = bool(extra_name) or bool(re.search(r';.*\bextra\b', line))
        (optional if is_extra else hard).add(norm(m.group(1)))
    return hard, optional

def python_requires(key):
    d = dists[key]
    meta = d['meta']
    lines = d['msg'].get_all('Requires-Dist') or []
    if meta.endswith('.egg-info') and os.path.isdir(meta):
        try:
            with open(os.path.join(meta, 'requires.txt')) as fh:
                section = None
                for line in fh:
                    s = line.strip()
                    if s.startswith('['):
                        section = s[1:-1]
                        continue
                    if section is None:
                        lines.append(s)
                    elif section.startswith(':'):
                        lines.append('%s; %s' % (s, section[1:]) if s else '')
        except OSError:
            pass
    found = []
    for n in req_names(lines, d['name']):
        k = norm(n)
        if k == key:
            continue
        if k not in dists:
            warn('%s requires %s, which is not installed in the search path; not listed' % (d['name'], n))
        elif k not in found:
            found.append(k)
    return found

# ---- files
tag = sys.implementation.cache_tag

def record_files(d):
    rec = os.path.join(d['meta'], 'RECORD')
    out, tops = [], []
    try:
        with open(rec, newline='') as fh:
            import csv
            for row in csv.reader(fh):
                if not row:
                    continue
                p = os.path.normpath(os.path.join(d['site'], row[0]))
                first = row[0].split('/')[0]
                if first and first not in ('..',) and not first.endswith(('.dist-info', '.egg-info')):
                    t = first[:-3] if first.endswith('.py') else first
                    if t not in tops and '.' not in t:
                        tops.append(t)
                if regular(p):
                    out.append(p)
    except OSError:
        return None, []
    return out, tops

def top_level(d, derived):
    meta = d['meta']
    try:
        with open(os.path.join(meta, 'top_level.txt')) as fh:
            names = [l.strip() for l in fh if l.strip()]
            if names:
                return names
    except OSError:
        pass
    return derived or [norm(d['name']).replace('-', '_')]

def top_scan(site, tops):
    out = []
    for t in tops:
        base = os.path.join(site, t)
        if os.path.isdir(base) and not os.path.islink(base):
            out += walk_files(base)
        for p in [base + '.py'] + sorted(glob.glob(glob.escape(base) + '.*.so')) + [base + '.so']:
            if regular(p):
                out.append(p)
        leaf = os.path.basename(base)
        out += sorted(p for p in glob.glob(os.path.join(glob.escape(os.path.dirname(base)), '__pycache__',
                                                    glob.escape(leaf) + '.' + tag + '*.pyc')) if regular(p))
    return out

def bytecode_of(path):
    """The compiled files Python keeps for the module at path: a Debian
    package lists its .py files, and py3compile writes their .pyc at
    install time, outside the package's file list (isympy.py of sympy)."""
    if not path.endswith('.py'):
        return []
    stem = os.path.basename(path)[:-3]
    cache = os.path.join(glob.escape(os.path.dirname(path)), '__pycache__')
    return sorted(p for p in glob.glob(os.path.join(cache, glob.escape(stem) + '.' + tag + '*.pyc'))
                  if regular(p))

def dpkg_files(pkgs):
    out = []
    for pk in pkgs:
        text = run(['dpkg-query', '-L', pk]) or ''
        for p in text.splitlines():
            if p.startswith('/') and regular(p) and not os.path.isdir(p):
                p = os.path.normpath(p)
                out.append(p)
                out += bytecode_of(p)
    return out

def dist_files(key):
    d = dists[key]
    meta = d['meta']
    files = walk_files(meta) if os.path.isdir(meta) else ([meta] if regular(meta) else [])
    derived = []
    if key not in owner and os.path.isdir(meta):
        rec, derived = record_files(d)
        if rec:
            files += rec
    files += top_scan(d['site'], top_level(d, derived))
    if key in owner:
        files += dpkg_files(owner[key])
    return files

# ---- the closure of what was asked for
result = {'python': platform.python_version(), 'search_path': search, 'unknown': unknown,
          'hints': hints,
          'distributions': [], 'site_files': [], 'warnings': warnings, 'notes': notes}
if not unknown:
    claimed = set()
    def claim(paths):
        out = []
        for p in paths:
            try:
                bad = len(p.encode('utf-8')) > 4095 or re.search('[\x00-\x1f\x7f]', p)
            except UnicodeError:
                bad = True
            if bad:
                warn('%a: a path a manifest cannot hold (not UTF-8, control characters, or too long); not listed' % p)
                continue
            if p not in claimed:
                claimed.add(p)
                out.append(p)
        return out
    paths = sysconfig.get_paths()
    stdlib = [os.path.normpath(paths['stdlib'])]
    if os.path.normpath(paths['platstdlib']) not in stdlib:
        stdlib.append(os.path.normpath(paths['platstdlib']))
    std = []
    for top in stdlib:
        skip = {os.path.join(top, 'site-packages'), os.path.join(top, 'dist-packages')}
        std += walk_files(top, skip)
    result['distributions'].append({'name': 'python', 'version': platform.python_version(),
                                    'requires': [], 'files': claim(std)})
    queue = []
    for n in requested:
        k = norm(n)
        if k not in queue:
            queue.append(k)
    i = 0
    while i < len(queue):
        key = queue[i]
        i += 1
        reqs = debian_requires(key) if key in owner else python_requires(key)
        for r in reqs:
            if r not in queue:
                queue.append(r)
        d = dists[key]
        result['distributions'].append({'name': d['name'], 'version': d['version'],
                                        'requires': [dists[r]['name'] for r in reqs],
                                        'files': claim(dist_files(key))})
    for site in search:
        for p in sorted(glob.glob(os.path.join(glob.escape(site), '*.pth'))):
            if regular(p) and p not in claimed:
                claimed.add(p)
                result['site_files'].append(p)

# ---- the wheelhouse: each *.whl (a regular file, not a link) with its
# name, version and the requirements that apply here: the marker true for
# this interpreter, no extra needed, written "NAME" or "NAME SPECIFIERS"
# (what pip's resolver inside the worker reads). Anything else in the
# directory is not looked at. The C side hashes the files.
METADATA_MAX = 16 << 20  # bytes of a METADATA read

def wheel_requires(lines, who):
    out = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            r = Requirement(line)
        except Exception as e:
            raise ValueError('Requires-Dist %r does not parse: %s' % (line, e))
        try:
            applies = r.marker is None or r.marker.evaluate({'extra': ''})
        except Exception as e:
            raise ValueError('the marker of Requires-Dist %r cannot be evaluated: %s' % (line, e))
        if not applies:
            continue
        if r.extras:
            warn('%s: Requires-Dist %r asks for extras of %s, which the manifest cannot '
                 'list; it requires %s alone' % (who, line, r.name, r.name))
        if r.url:
            warn('%s: Requires-Dist %r names a URL; the wheelhouse must hold %s'
                 % (who, line, r.name))
        spec = str(r.specifier)
        out.append(r.name + (' ' + spec if spec else ''))
    return out

def read_wheel(p, f):
    import zipfile
    try:
        z = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError('not a zip archive (%s)' % e)
    with z:
        metas = [i for i in z.infolist() if i.filename.count('/') == 1
                 and i.filename.endswith('.dist-info/METADATA')]
        if not metas:
            raise ValueError('it holds no NAME.dist-info/METADATA: not a wheel')
        if len(metas) > 1:
            raise ValueError('it holds %d NAME.dist-info/METADATA files, not one' % len(metas))
        if metas[0].file_size > METADATA_MAX:
            raise ValueError('its METADATA is larger than %d bytes' % METADATA_MAX)
        try:
            text = z.read(metas[0])
        except Exception as e:
            raise ValueError('cannot read its %s (%s)' % (metas[0].filename, e))
    m = email.parser.BytesParser().parsebytes(text, headersonly=True)
    name, version = str(m.get('Name', '')).strip(), str(m.get('Version', '')).strip()
    if not name or not version:
        raise ValueError('its %s has no %s' % (metas[0].filename, 'Name' if not name else 'Version'))
    return {'path': p, 'name': name, 'version': version,
            'requires': wheel_requires(m.get_all('Requires-Dist') or [], f)}

def list_wheelhouse(top):
    if Requirement is None:
        result['bad_wheels'].append('%s: reading Requires-Dist needs python3-packaging' % top)
        return
    try:
        names = sorted(os.listdir(top))
    except OSError as e:
        result['bad_wheels'].append('%s: the wheelhouse cannot be listed: %s' % (top, e.strerror))
        return
    for f in names:
        p = os.path.join(top, f)
        if not f.endswith('.whl') or os.path.islink(p) or not os.path.isfile(p):
            continue
        try:
            result['wheels'].append(read_wheel(p, f))
        except ValueError as e:
            result['bad_wheels'].append('%s: %s' % (p, e))

result['wheels'] = []
result['bad_wheels'] = []
for top in wheelhouses:
    list_wheelhouse(top)
json.dump(result, sys.stdout)
