"""Which code results depend on, read without running it: the source of modules (a digest
of their text, read from their files without importing them), the installed distributions'
versions, whether a module is the user's own code, and the modules of a package found on
disk.

A study's cache and a model's identity (:mod:`uqkit.execution.identity`) key results by
these: an edited module of the user's is other code; an installed package is its version.

Imports: the standard library.

Example:
    >>> package_modules("uqkit.execution")[:2]
    ['uqkit.execution', 'uqkit.execution.arguments']
    >>> len(source_digest(["uqkit.execution.sources"]))  # SHA-256, hex
    64
"""
import functools
import hashlib
import inspect
import os
import sys

__all__ = ["source_digest", "package_modules"]


@functools.lru_cache(maxsize=None)
def _packages_distributions():
    """``importlib.metadata.packages_distributions()``, read once per process: it scans every
    installed distribution (~0.5 s), and a study asks for it once per model description."""
    from importlib import metadata

    return metadata.packages_distributions()


def _versions(module_name):
    """``{distribution: version}`` of the installed distributions providing the top-level
    package of ``module_name`` (empty for a script or a notebook)."""
    from importlib import metadata

    top = module_name.split(".")[0]
    out = {}
    for dist in _packages_distributions().get(top, []):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover - broken install
            pass
    return out


def source_digest(module_names):
    """SHA-256 of the source code of the named modules (in the given order); None if any has
    no readable source.

    A module that is not imported yet is read from its file without being imported (nor its
    package's ``__init__`` run), so that hashing, say, the surrogates' code does not load torch
    into a process that never trains; the text is the same as ``inspect.getsource`` of the
    imported module."""
    h = hashlib.sha256()
    for name in module_names:
        try:
            h.update(_module_source(name).encode())
        except (OSError, TypeError):
            return None
    return h.hexdigest()


def _module_source(name):
    """The source text of module ``name`` (see :func:`source_digest`)."""
    import linecache

    module = sys.modules.get(name)
    if module is None:
        origin = _source_file(name)
        if origin is not None:
            lines = linecache.getlines(origin)
            if lines:
                return "".join(lines)
        import importlib

        module = importlib.import_module(name)
    return inspect.getsource(module)


def _source_file(name):
    """The ``.py`` file of module ``name``, found without executing the module or its parent
    packages (the top-level name by every finder, as ``import`` would; a submodule in its
    package's directories); None when it cannot be found that way."""
    from importlib.machinery import PathFinder
    from importlib.util import find_spec

    top, *rest = name.split(".")
    spec = sys.modules[top].__spec__ if top in sys.modules else find_spec(top)
    for part in rest:
        path = spec.submodule_search_locations if spec is not None else None
        if path is None:
            return None
        spec = PathFinder.find_spec(f"{spec.name}.{part}", path)
    origin = spec.origin if spec is not None else None
    return origin if isinstance(origin, str) and origin.endswith(".py") else None


def _is_user_code(module_name):
    """Whether ``module_name`` is the user's own code (a script, a notebook, a project's
    modules), not the standard library's nor an installed distribution's (those are
    identified by their versions)."""
    top = str(module_name).split(".")[0]
    return top not in sys.stdlib_module_names and top != "builtins" and not _versions(top)


def _has_source_file(module_name):
    """Whether the module was loaded from a source file (whose text then identifies its
    globals): not a notebook's or ``python -c``'s ``__main__``."""
    path = getattr(sys.modules.get(module_name), "__file__", None)
    return isinstance(path, str) and path.endswith(".py") and os.path.isfile(path)


def package_modules(name):
    """The module ``name`` and, for a package, every module inside it at any depth (folders
    whose names start with ``_`` or ``.`` left out), found on disk, not imported: the
    package first, then its modules and subpackages in sorted order."""
    from importlib.util import find_spec

    top, *rest = name.split(".")
    spec = find_spec(top)  # a top-level name: nothing is imported
    if spec is None:
        raise ImportError(f"no module named {top!r}")
    if spec.submodule_search_locations is None:  # a module of one file, not a package
        return [name]
    folder = os.path.join(os.path.dirname(spec.origin), *rest)
    if not os.path.isdir(folder):
        return [name]
    names = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        package = ".".join([name, *os.path.relpath(root, folder).split(os.sep)]) \
            if root != folder else name
        names.append(package)
        names += [f"{package}.{f[:-3]}" for f in sorted(files)
                  if f.endswith(".py") and f != "__init__.py"]
    return names
