"""The import hook of a signed package manifest, first in sys.meta_path.

It asks the finders after it, and lets a module through only if its file
is listed or lies beneath the session directory (a cell's own modules), a
namespace package only if a listed file lies beneath one of its
directories; builtin and frozen modules, and modules that no file backs
(six.moves), always. Not a boundary (a cell can remove it): Landlock
refuses the unlisted files themselves. It gives the refusal a message
that names the policy. The worker embeds this file (tools/embed.sh) and
loads it as _codeinterp_manifest_finder, then calls install(); the
manifest's checks are _codeinterp's (lib/worker/interp.c).
"""
import os, sys
from _codeinterp import (manifest_listed as _listed,
                         manifest_listed_beneath as _listed_beneath,
                         manifest_matches as _matches)
from _frozen_importlib import BuiltinImporter, FrozenImporter
from _frozen_importlib_external import SourceFileLoader

class ManifestLoader(SourceFileLoader):
    # Checks the bytes a module is made of against the manifest as it
    # reads them, so that a source changed after the zygote's check is
    # refused, not run. Unlisted bytecode is ignored (the checked
    # source is compiled instead).
    def get_data(self, path):
        data = super().get_data(path)
        if path.endswith(('.py', '.pyc')):
            ok = _matches(path, data)
            if ok < 0 and path != self.path:
                raise OSError(f'{path} is not in the signed package manifest')
            if ok <= 0:
                raise ImportError(f'{path} changed since the signed package manifest'
                                  ' was checked; it is not run', name=self.name,
                                  path=path)
        return data

class ManifestFinder:
    # Imports only what the signed package manifest lists.
    _session = None

    def _local(self, path):
        s = self._session
        return s is not None and os.path.realpath(path).startswith(s)

    def _allowed(self, spec):
        if spec.loader in (BuiltinImporter, FrozenImporter):
            return True
        if (spec.loader is None and spec.origin is None
                and spec.submodule_search_locations is not None):
            return any(isinstance(d, str) and (_listed_beneath(d) or self._local(d))
                       for d in spec.submodule_search_locations)
        if spec.has_location and isinstance(spec.origin, str):
            return _listed(spec.origin) or self._local(spec.origin)
        return True

    def find_spec(self, name, path=None, target=None):
        # Only the finders after this one: one before it may be asking.
        at = sys.meta_path.index(self) + 1 if self in sys.meta_path else 0
        for finder in sys.meta_path[at:]:
            find = getattr(finder, 'find_spec', None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if self._allowed(spec):
            if (type(spec.loader) is SourceFileLoader
                    and not self._local(spec.origin)):
                spec.loader = ManifestLoader(spec.loader.name, spec.loader.path)
            return spec
        raise ModuleNotFoundError(f'No module named {name!r}: the signed package'
                                  ' manifest does not list it', name=name)

    def invalidate_caches(self):
        pass

finder = ManifestFinder()


def install(search):
    # The hook first, then the manifest's search path (a list of str)
    # as the only one.
    sys.meta_path.insert(0, finder)
    sys.path[:] = search
    sys.path_importer_cache.clear()
    # help(), copyright() and the rest, without running site's main().
    import site
    site.sethelper()
    site.setcopyright()
