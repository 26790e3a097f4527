"""A model's identity: what a study store and the result cache key its results by, so
that results of two different models are never mixed, and a resumed run of the same model
finds its own.

:func:`describe_model` gives a model's ``describe()`` where it has one, else its qualified
name and :func:`fingerprint`, a hash of its code (bytecode, followed through what it
holds and calls), the values it holds, its modules' source and its packages' versions;
:func:`identity_key` hashes either; :mod:`uqkit.execution.sources` reads the modules' source and
versions. The values a model holds are hashed by their pickle, the same in every
process and in an unpickled copy: functions and modules by name, sets in a fixed order,
numba dispatchers by their Python function, torch tensors, NumPy values and strings by their
values (:mod:`uqkit.execution.value_bytes`); the code moved to another directory is the
same code.

Imports: the standard library; numba, torch and the model's own modules only as the model
brings them.
"""
import functools
import hashlib
import inspect
import sys
import warnings

from .sources import _has_source_file, _is_user_code, _versions, source_digest
from .value_bytes import _attributes, _is_numba, _value_bytes

__all__ = ["fingerprint", "ARRAY_VALUES", "json_default", "identity_key", "describe_model",
           "user_modules"]


def _code_objects(obj, seen):
    """The Python functions and classes whose code decides what ``obj`` computes: a function
    (unwrapped from ``functools.partial``, bound methods and numba's dispatchers), the
    classes of an object's MRO (builtins aside), and what the functions and objects found
    in closures, defaults, partial arguments, containers, the user's own objects'
    attributes and, for the user's own code (``_is_user_code``), the module globals its
    functions read lead to. Depth first, in a fixed order, without recursion (a chain of a
    thousand linked objects is fine)."""
    found, stack = [], [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        own, parts = _code_parts(item, item is obj)
        found += own
        stack.extend(reversed(parts))
    return found


def _code_parts(obj, top=False):
    """``(targets, parts)``: the functions and classes ``obj`` itself is or defines, and the
    values to look into next (see ``_code_objects``); ``top``: ``obj`` is the model
    itself, whose classes count even where they are an installed package's."""
    import types

    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes,
                                       types.ModuleType)):
        return [], []
    if isinstance(obj, functools.partial):
        return [], [obj.func, *obj.args, *obj.keywords.values()]
    if inspect.ismethod(obj):
        return [], [obj.__func__, obj.__self__]
    if _is_numba(obj):
        return [], [obj.py_func]
    if inspect.isfunction(obj):
        return [obj], [v for _, v in _function_data(obj)]
    if isinstance(obj, (tuple, list)):
        return [], list(obj)
    if isinstance(obj, dict):
        return [], list(obj.values())
    if isinstance(obj, (set, frozenset)):
        return [], []
    cls = obj if inspect.isclass(obj) else type(obj)
    found = [c for c in cls.__mro__ if c.__module__ != "builtins"]
    if not inspect.isclass(obj) and not _is_user_code(cls.__module__):
        # a value of an installed type (an array, a model's weights): its data is hashed
        # with its value, the code it wraps (np.vectorize's function, a pipeline's or a
        # network's own steps of the user's classes) is followed; the model itself: its
        # classes' code and versions too
        wraps = [v for _, v in _attributes(obj)
                 if _is_code(v) or isinstance(v, (dict, list, tuple))
                 or _is_user_code(type(v).__module__)]
        return (found if top else []), wraps
    parts = [v for c in found if _is_user_code(c.__module__) for f in _class_functions(c)
             for v in (f, *(v for _, v in _function_data(f)))]
    if not inspect.isclass(obj):
        parts += [v for _, v in _attributes(obj)]
    return found, parts


def _is_code(v):
    return (inspect.isfunction(v) or inspect.ismethod(v) or isinstance(v, functools.partial)
            or _is_numba(v))


def _nested_codes(code):
    """A code object and the code nested in it (lambdas, comprehensions, inner functions)."""
    import types

    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested_codes(const)


def _global_names(code):
    """The global names a code object and the code nested in it may read."""
    return {name for c in _nested_codes(code) for name in c.co_names}


def _function_data(f):
    """``(label, value)`` of what a function's result may depend on beside its bytecode: its
    defaults, keyword-only defaults and closure cells, and, for the user's own code, the
    module globals its code reads, but those a function of its module assigns (state: a
    call counter, a table loaded on first use). All of them where the module has no source
    file (a notebook, ``python -c``). Else the functions, classes and modules among them;
    the values that cannot change in place (``_is_atom``: numbers, strings, tuples of
    them) and arrays and tables (``_is_data``: ``LOADS = np.loadtxt("loads.csv")``),
    which the source may not hold (``from settings import SCALE``, ``N =
    int(sys.argv[1])``), also those it reads through a user module it holds
    (``settings.SCALE``); and for another container or object, the source of the user modules
    that hold it (``from settings import PARAMS``: ``settings.py``) and its class where
    that is the user's, not its value, so a cache the model fills as it runs does not make
    it another model (and a dict of settings changed at run time is not seen: a
    ``describe()`` names it)."""
    out = [(f"default {i}", v) for i, v in enumerate(f.__defaults__ or ())]
    out += [(f"kwdefault {k}", v) for k, v in sorted((f.__kwdefaults__ or {}).items())]
    for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            out.append((f"cell {name}", cell.cell_contents))
        except ValueError:  # an empty cell
            pass
    module = f.__globals__.get("__name__", f.__module__)  # a decorator's: its own module
    if not _is_user_code(module):
        return out
    whole = not _has_source_file(module)
    stored, stored_attributes = _module_state(f)
    names = _global_names(f.__code__) - stored
    for name in sorted(n for n in names if n in f.__globals__):
        value = f.__globals__[name]
        if _is_data(value):
            out.append((f"global {name}", _data_digest(value)))
        elif whole or _is_atom(value) or _is_code(value) or inspect.isclass(value) \
                or inspect.ismodule(value):
            out.append((f"global {name}", value))
        else:
            out += [(f"global {name} held by", m) for m in _holders(value, f.__globals__)]
            if _is_user_code(type(value).__module__):
                out.append((f"global {name} class", type(value)))
        if inspect.ismodule(value) and _is_user_code(value.__name__):
            out += _module_attributes(f"global {name}", value, names, stored_attributes)
    return out


def _module_attributes(label, module, names, stored_attributes, seen=None):
    """``(label, value)`` of the atoms and user submodules of a user module that code names,
    submodules followed in turn (``import pkg.sub``, ``pkg.sub.f()``: only ``pkg/__init__.py``
    was hashed, and an edit of ``f`` served the old results)."""
    seen = set() if seen is None else seen
    seen.add(module.__name__)
    out = []
    for attr, v in sorted(vars(module).items()):
        if attr not in names or attr in stored_attributes:
            continue
        if _is_atom(v) or _is_data(v):
            out.append((f"{label}.{attr}", _data_digest(v) if _is_data(v) else v))
        elif inspect.ismodule(v) and _is_user_code(v.__name__) and v.__name__ not in seen:
            out.append((f"{label}.{attr}", v))
            out += _module_attributes(f"{label}.{attr}", v, names, stored_attributes, seen)
    return out


#: Elements beyond which a tuple or frozenset is hashed by the source that makes it, like a
#: container: hashing 200,000 pairs by value took seconds.
ATOM_MAX_ITEMS = 10_000


def _is_atom(value):
    """Whether a value cannot change in place: None, a bool, number, string or bytes, NumPy
    scalar, or a tuple or frozenset of atoms (up to :data:`ATOM_MAX_ITEMS` of them)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    if isinstance(value, (tuple, frozenset)):
        return len(value) <= ATOM_MAX_ITEMS and all(_is_atom(v) for v in value)
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.generic)


def _is_data(value):
    """Whether a value is an array or a table: a NumPy array, a torch tensor, a pandas
    DataFrame, Series or Index. A module global of these counts by its values, not by the
    source that makes it: most often it is read from a data file at import (``LOADS =
    np.loadtxt("loads.csv")``), whose edit the source does not show."""
    kinds = []
    for module, names in (("numpy", ("ndarray",)), ("torch", ("Tensor",)),
                          ("pandas", ("DataFrame", "Series", "Index"))):
        package = sys.modules.get(module)
        if package is not None:
            kinds += [getattr(package, name) for name in names if hasattr(package, name)]
    return bool(kinds) and isinstance(value, tuple(kinds))


def _data_digest(value):
    """An array's or table's values as a tuple of atoms: its kind and, per part (a table's
    values, index and columns), its dtype, shape and the SHA-256 of its bytes. Not its
    pickle: a pandas Index pickles its lookup cache, so a model that only read it
    (``NAMES.get_loc("steel")``) was another model after its first run."""
    import numpy

    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.Index):
        return ("Index", repr(value.name), _array_digest(value.to_numpy()))
    if pandas is not None and isinstance(value, pandas.Series):
        return ("Series", repr(value.name), _array_digest(value.to_numpy()),
                _data_digest(value.index))
    if pandas is not None and isinstance(value, pandas.DataFrame):
        return ("DataFrame", _array_digest(value.to_numpy()), _data_digest(value.index),
                _data_digest(value.columns))
    if hasattr(value, "detach"):  # a torch tensor (bfloat16 has no NumPy dtype)
        tensor = value.detach().cpu()
        value = (tensor.float() if str(tensor.dtype) == "torch.bfloat16" else tensor).numpy()
    return _array_digest(numpy.asarray(value))


def _array_digest(array):
    """``("array", dtype, shape, SHA-256)`` of a NumPy array; an array of objects (strings,
    tuples) by the repr of its items, in order."""
    import numpy

    array = numpy.ascontiguousarray(array)
    data = repr(array.tolist()).encode() if array.dtype.hasobject else array.tobytes()
    return ("array", array.dtype.str, array.shape, hashlib.sha256(data).hexdigest())


def _holders(value, own):
    """The user modules whose globals hold ``value`` (where an imported container or object
    was made; their source stands for it), but the one whose globals are ``own`` under any
    name (``__mp_main__``, which a process pool makes of ``__main__``: a script's model was
    another one after its first pool)."""
    out = []
    for name in user_modules():
        found = getattr(sys.modules.get(name), "__dict__", None)
        if isinstance(found, dict) and found is not own and \
                any(v is value for v in list(found.values())):
            out.append(sys.modules[name])
    return out


#: (modules loaded, the user's among them) when :func:`user_modules` last looked.
_USER_MODULES = [-1, ()]


def user_modules():
    """The names of the loaded modules that are the user's own (``_is_user_code``), in
    order: each top-level name classified once (looking up an installed package's version
    per module took seconds with torch's thousand), and found again only when modules were
    loaded or removed since."""
    if _USER_MODULES[0] != len(sys.modules):
        loaded = list(sys.modules)
        verdict = {top: _is_user_code(top) for top in {n.split(".")[0] for n in loaded}}
        _USER_MODULES[:] = [len(loaded),
                            tuple(sorted(n for n in loaded if verdict[n.split(".")[0]]))]
    return _USER_MODULES[1]


def _module_state(f):
    """(globals, attribute names) that the functions of ``f``'s module (its own, its
    classes' and ``f`` itself) assign: state the code keeps, not what it is."""
    codes = [f.__code__]
    for value in list(f.__globals__.values()):
        funcs = [value] if inspect.isfunction(value) else (
            _class_functions(value) if inspect.isclass(value) else [])
        codes += [g.__code__ for g in funcs if g.__globals__ is f.__globals__]
    stored, attributes = set(), set()
    for code in codes:
        names, attrs = _stores(code)
        stored |= names
        attributes |= attrs
    return stored, attributes


@functools.lru_cache(maxsize=4096)
def _stores(code):
    """(globals, attribute names) a code object and the code nested in it assign."""
    import dis

    names, attrs = set(), set()
    for c in _nested_codes(code):
        for i in dis.get_instructions(c):
            if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                names.add(i.argval)
            elif i.opname in ("STORE_ATTR", "DELETE_ATTR"):
                attrs.add(i.argval)
    return frozenset(names), frozenset(attrs)


def _class_functions(cls):
    """The functions defined in a class's own body (static and class methods and properties
    unwrapped), by name."""
    out = []
    for _, v in sorted(vars(cls).items()):
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if isinstance(v, property):
            out += [f for f in (v.fget, v.fset, v.fdel) if inspect.isfunction(f)]
        elif inspect.isfunction(v):
            out.append(v)
    return out


def _without_file(code):
    """``code`` and the code nested in it with no file name: a project moved or copied to
    another directory is the same model (its source is hashed anyway)."""
    import types

    consts = tuple(_without_file(c) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename="", co_consts=consts)


def _bytecode(target):
    """The bytecode of a function or of a class's own functions, with the values they hold
    (``_function_data``) and, for the user's own class without a source file, its other
    attributes, as bytes; empty for anything without Python bytecode."""
    import marshal

    user = _is_user_code(getattr(target, "__module__", "builtins"))
    funcs = [target] if inspect.isfunction(target) else _class_functions(target)
    out = []
    for f in funcs:
        out.append(marshal.dumps(_without_file(f.__code__)))
        for label, value in _function_data(f):
            out += [label.encode(), _value_bytes(value)]
    if user and inspect.isclass(target) and not _has_source_file(target.__module__):
        for name, value in sorted(vars(target).items()):
            if not (name.startswith("__") or inspect.isfunction(value)
                    or isinstance(value, (staticmethod, classmethod, property))):
                out += [f"attribute {name}".encode(), _value_bytes(value)]
    return b"".join(out)


def fingerprint(obj):
    """A strong identity of a model object, as a dict.

    It hashes, so that a store never mixes results of two different models:

    * the object's state, pickled (its parameters, weights, bound arguments);
    * the bytecode of every function and class that decides what it computes
      (``_code_objects``: a function in a notebook, a lambda or a closure has no other
      identity, since a plain pickle holds functions and classes by name only), followed
      through closures, defaults, instance attributes and the user's own module globals
      (another module of the user's project that the model calls is hashed too), with the
      values those functions hold: defaults, keyword-only defaults and closure cells, of any
      kind (a closure made with another constant, dict or object is another model);
    * the source of the modules that define them (a changed function body, class attribute
      or module constant changes it; for a model defined in a script, any edit of the
      script), and the numbers, strings and tuples, arrays and tables (NumPy, torch,
      pandas) among the user's module globals its functions read (an imported constant, a
      setting from ``sys.argv``, a table read from a data file at import: the source may
      not hold their values); where a module has no source file (a notebook, ``python
      -c``), every global its functions read and its classes' attributes. Random number
      generators and ``os.environ`` count by their type only;
    * the versions of the installed packages that provide those modules.

    A model that changes what it holds as it runs (a call counter, a cache) changes its
    fingerprint with it, and a store refuses it on a resume: such a model should say what it
    is with a ``describe()`` method.

    ``strong`` is False when no Python bytecode decides the result (a callable written in C,
    say); :func:`describe_model` then warns.
    """
    # a function is identified by its code and the values it holds, below
    state = b"" if inspect.isfunction(obj) or _is_numba(obj) else _value_bytes(obj)
    targets = _code_objects(obj, set())
    code = b"".join(_bytecode(t) for t in targets)
    modules = sorted({t.__module__ for t in targets if t.__module__ in sys.modules})
    sources = [source_digest([m]) or "" for m in modules]
    versions = sorted({kv for m in modules for kv in _versions(m).items()})
    h = hashlib.sha256()
    for part in (state, code, repr(sources).encode(), repr(versions).encode()):
        h.update(hashlib.sha256(part).digest())
    target = targets[0] if targets else type(obj)
    return {"sha256": h.hexdigest(), "module": getattr(target, "__module__", "?"),
            "strong": bool(code)}


#: The most elements of an array that a store's settings record by value
#: (:func:`json_default`); a larger one is recorded by dtype, shape and a digest.
ARRAY_VALUES = 64


def json_default(value):
    """What settings record for a value JSON has no form for: a NumPy array by its values
    (up to ``ARRAY_VALUES`` of them) or by its dtype, shape and the sha256 of its bytes,
    anything else (a NumPy scalar, a path) as ``str(value)``. ``str`` of an array kept 8
    digits and cut a long one short with "...": a constant changed in its ninth digit, or
    in the middle of 2,000 values, read as the stored one and its results were reused.

    >>> import numpy
    >>> json_default(numpy.array([1.0, 2.000000001]))
    [1.0, 2.000000001]
    >>> sorted(json_default(numpy.zeros(100)))
    ['dtype', 'sha256', 'shape']
    """
    import numpy

    if isinstance(value, numpy.ndarray):
        if value.size <= ARRAY_VALUES:
            return value.tolist()
        data = (repr(value.tolist()).encode() if value.dtype.hasobject
                else numpy.ascontiguousarray(value).tobytes())
        return {"dtype": str(value.dtype), "shape": list(value.shape),
                "sha256": hashlib.sha256(data).hexdigest()}
    return str(value)


def identity_key(model):
    """A short hash of a model's identity (its ``describe()``, else its :func:`fingerprint`),
    without the warning of :func:`describe_model`."""
    import json

    describe = _method(model, "describe")
    ident = describe() if describe is not None else fingerprint(model)["sha256"]
    return hashlib.sha256(json.dumps(ident, sort_keys=True,
                                     default=json_default).encode()).hexdigest()


def _method(obj, name):
    """``obj.name`` if it is callable, else None; an attribute lookup that raises (a
    dict-backed ``__getattr__`` raising KeyError, say) counts as none."""
    try:
        found = getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - any lookup error: the object has no such method
        return None
    return found if callable(found) else None


def describe_model(model):
    """A JSON-friendly identity of a model for the study store: its ``describe()`` if it has
    one, else its qualified name with a :func:`fingerprint`.

    Warns when no strong identity can be had (no source code to hash, nothing to pickle):
    then a changed model would reuse old results, and the warning says how to name it.
    """
    describe = _method(model, "describe")
    if describe is not None:
        return describe()
    target = model if (inspect.isfunction(model) or inspect.isclass(model)) else type(model)
    name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
    fp = fingerprint(model)
    if not fp["strong"]:
        warnings.warn(f"uqkit cannot identify the model {name} strongly (no source code or "
                      "pickle): a store would not notice if it changed. Give it a describe() "
                      "method that returns a dict naming its version and settings",
                      stacklevel=3)
    return {"model": name, "fingerprint": fp["sha256"]}
