"""Bytes that stand for a value a model holds, the same in every process and in an
unpickled copy: its pickle, with stand-ins for what pickles differently in every process
(functions and modules by name, sets in a fixed order, numba dispatchers by their Python
function, torch tensors by their values, random number generators by their type) and with
strings and NumPy values by value, not by which of them share memory. Used by
:mod:`uqkit.execution.identity` to hash what a model holds.

Imports: the standard library; NumPy, numba and torch only where the value holds them.
"""
import functools
import inspect
import os
import sys

from .sources import _is_user_code, _versions, source_digest

__all__ = ["PICKLE_RECURSION"]


def _is_numba(v):
    """Whether ``v`` is a numba dispatcher (``@njit``): identified by its Python function,
    not by its pickle, which holds a fresh UUID in every process."""
    if not type(v).__module__.startswith("numba"):
        return False
    try:
        return inspect.isfunction(getattr(v, "py_func", None))
    except Exception:  # noqa: BLE001 - an attribute lookup that raises
        return False


def _attributes(obj):
    """An object's attributes by name: its ``__dict__`` and its ``__slots__`` (what cannot be
    read counts as absent)."""
    try:
        found = getattr(obj, "__dict__", None)
        out = dict(found) if isinstance(found, dict) else {}
    except Exception:  # noqa: BLE001 - a __dict__ property that raises
        out = {}
    for cls in type(obj).__mro__:
        slots = vars(cls).get("__slots__", ())
        for name in ((slots,) if isinstance(slots, str) else slots):
            try:
                if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                    out[name] = getattr(obj, name)
            except Exception:  # noqa: BLE001 - an unset or failing slot
                pass
    return sorted(out.items(), key=lambda kv: str(kv[0]))


#: Python's recursion limit while a value is pickled for its hash (a mesh of linked nodes
#: and elements pickles depth first: a 20 x 20 one needs about 3,000 frames).
PICKLE_RECURSION = 8000


def _value_bytes(value):
    """Bytes that stand for a value a function or model holds, the same in every process and
    in an unpickled copy: its pickle (``_pickled``: unambiguous, in the order of its dicts,
    each shared object once but strings and NumPy values, which stand by value wherever they
    occur), where functions, classes, numba dispatchers and modules stand by their names (a
    function's code and what it holds are hashed on their own, ``_bytecode``; a user
    module also by its source), sets by their members in a fixed order (not in the order
    they iterate in, which follows the process's string hashing) and torch tensors by their
    values (their pickle holds memory addresses). An object that cannot be pickled (a lock,
    an open file) by its type and its attributes, one by one.

    Raises:
        ValueError: the value nests too deep to hash (a long chain of linked objects).
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, PICKLE_RECURSION))  # a mesh's linked nodes and elements
    try:
        return _pickled(value)
    except RecursionError:
        raise ValueError(f"cannot identify the model: what it holds nests too deep "
                         f"({type(value).__qualname__}); give it a describe() method") \
            from None
    except Exception:  # noqa: BLE001 - a lock, a file: its parts, one by one
        kind = type(value)
        return f"{kind.__module__}.{kind.__qualname__}|object".encode() + b"".join(
            len(b).to_bytes(8, "little") + b for kv in _attributes(value) for b in (
                _pickled(kv[0]), _value_bytes(kv[1]) if kv[1] is not value else b"(self)"))
    finally:
        sys.setrecursionlimit(limit)


def _pickled(value):
    """``value``'s pickle by ``_pickler_class``."""
    import io

    out = io.BytesIO()
    _pickler_class()(out, protocol=4).dump(value)
    return out.getvalue()


@functools.lru_cache(maxsize=None)
def _pickler_class():
    """The pickler of ``_value_bytes``: Python's own (its C one passes sets by before
    it can see them), with stand-ins for what pickles differently in every process or not
    at all, and strings and NumPy values by value, not by which of them share memory."""
    import pickle
    import types

    class Pickler(pickle._Pickler):
        def memoize(self, obj):
            # strings and NumPy values by value: which of them are one object (an interned
            # attribute name used as a key and a value, an array held by two attributes)
            # differs in an unpickled copy (joblib's keeps no array shared)
            numpy = sys.modules.get("numpy")
            if not isinstance(obj, (str, bytes)) and not (numpy is not None and isinstance(
                    obj, (numpy.dtype, numpy.generic, numpy.ndarray))):
                super().memoize(obj)

        def reducer_override(self, obj):
            if obj is _stand_in:
                return NotImplemented  # pickled by name, as any module-level function
            if isinstance(obj, (set, frozenset)):
                members = sorted(_pickled(v) for v in obj)
                return _stand_in, (type(obj).__name__, members)
            if isinstance(obj, types.ModuleType):
                name = obj.__name__
                source = source_digest([name]) if _is_user_code(name) else None
                return _stand_in, ("module", name, source or sorted(_versions(name).items()))
            if _is_numba(obj):
                obj = obj.py_func
            if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
                return _stand_in, ("code", getattr(obj, "__module__", None) or "?",
                                   getattr(obj, "__qualname__", "?"))
            if _is_random_state(obj) or isinstance(obj, type(os.environ)):
                # a generator's state moves with every draw; the environment holds the
                # shell's own variables (PWD, SHLVL...): read what a model needs of it
                # inside, or name it in a describe()
                return _stand_in, ("by type", type(obj).__module__,
                                   type(obj).__qualname__)
            numpy = sys.modules.get("numpy")
            if numpy is not None and isinstance(obj, (numpy.dtype, numpy.generic,
                                                      numpy.ndarray)):
                value = _numpy_value(numpy, obj)
                if value is not None:
                    return _stand_in, value
            torch = sys.modules.get("torch")
            if torch is not None and isinstance(obj, torch.Tensor):
                data = obj.detach().cpu()
                raw = data.float() if data.dtype == torch.bfloat16 else data
                return _stand_in, ("tensor", str(data.dtype), tuple(data.shape),
                                   raw.contiguous().view(-1).numpy(force=True).tobytes())
            return NotImplemented

    return Pickler


def _numpy_value(numpy, obj):
    """A NumPy dtype, scalar or array by its value alone (None for an array of objects,
    pickled as any object): their pickle shares dtype objects where they are shared in
    memory, which an unpickled copy does not, so a surrogate loaded from disk was another
    model than the one saved, its predictions bit for bit the same."""
    if isinstance(obj, numpy.dtype):
        return ("dtype", repr(obj))
    if isinstance(obj, numpy.generic):
        return ("numpy scalar", repr(obj.dtype), obj.tobytes())
    if obj.dtype.hasobject:
        return None
    return ("ndarray", type(obj).__qualname__, repr(obj.dtype), obj.shape,
            numpy.ascontiguousarray(obj).tobytes())


def _is_random_state(obj):
    """Whether ``obj`` is a random number generator (NumPy's, the standard library's,
    torch's), whose state moves with every draw: a model that draws from a global one would
    otherwise be another model after each run. Its seed, where the source sets it, is in the
    source."""
    import random

    kinds = [random.Random]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kinds += [numpy.random.Generator, numpy.random.RandomState,
                  numpy.random.BitGenerator, numpy.random.SeedSequence]
    torch = sys.modules.get("torch")
    if torch is not None:
        kinds.append(torch.Generator)
    return isinstance(obj, tuple(kinds))


def _stand_in(*args):  # pragma: no cover - never called: only named in a hash
    return args
