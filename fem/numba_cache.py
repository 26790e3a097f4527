"""numba's on-disk cache of fem's kernels, kept in step with fem's sources.

numba keys a cached function by its own file's time stamp and size only. A change in a function
it calls from another module (the element kernel of :mod:`fem.element`, compiled into
:func:`fem.newton.solve_path` and ``fem.batch._solve_rows``) leaves the caller's cached
machine code in place, so an edited checkout, or an editable install updated by ``git pull``,
runs the old kernel without a word (numba's documentation, "Cache invalidation fails to
recognize changes in functions defined in a different file"; numba issue 1833). A library
cannot change how numba keys its cache, so :func:`refresh`, run when :mod:`fem` is imported,
checks the sources itself: where their digest differs from the one stamped in the cache
folder, it empties the cache index of every cached function of fem (numba then compiles them
afresh and saves them again) and stamps the new digest.

On disk: ``fem-sources.<tag>.sha256`` in each folder numba caches fem's functions in
(``fem/__pycache__`` or, with ``NUMBA_CACHE_DIR``, its mirror of fem's path there), one per
interpreter as numba's index files are (the tag is theirs: ``py311``, ``py313t``): the hex
SHA-256 of fem's ``.py`` files, each its name, a NUL and its bytes, in name order.

Imports: the standard library; numba's dispatchers come from the modules given.

    >>> len(sources_digest(__import__("os").path.dirname(__file__)))
    64
"""
import hashlib
import os
import sys

__all__ = ["STAMP", "sources_digest", "cached_functions", "refresh"]

#: The stamp file's name in a cache folder: this interpreter's, as numba's index files are
#: (another Python version or build sharing the folder keeps its own index and stamp).
STAMP = (f"fem-sources.py{sys.version_info[0]}{sys.version_info[1]}"
         f"{getattr(sys, 'abiflags', '')}.sha256")


def sources_digest(folder):
    """Hex SHA-256 of the ``.py`` files of ``folder`` (names and contents, in name order)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def cached_functions(modules):
    """The ``cache=True`` numba dispatchers defined in ``modules``, as (dispatcher, cache)."""
    found = []
    for module in modules:
        for value in vars(module).values():
            cache = getattr(value, "_cache", None)
            if (getattr(value, "__module__", None) == module.__name__
                    and hasattr(cache, "flush") and hasattr(cache, "_cache_path")):
                found.append((value, cache))
    return found


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def refresh(modules, folder):
    """Empty the cache index of the cached functions of ``modules`` wherever the digest of
    ``folder``'s sources differs from the stamp in their cache folder; returns the number of
    functions whose index was emptied. A folder numba cannot write to is left as it is
    (numba does not cache there either)."""
    digest = sources_digest(folder)
    by_path = {}
    for _, cache in cached_functions(modules):
        by_path.setdefault(cache._cache_path, []).append(cache)
    emptied = 0
    for path, caches in by_path.items():
        stamp = os.path.join(path, STAMP)
        if _read(stamp) == digest:
            continue
        try:
            for cache in caches:
                cache.flush()
                emptied += 1
            with open(stamp, "w") as f:
                f.write(digest + "\n")
        except OSError:
            continue
    return emptied
