"""Where the value of a global that a model's code reads comes from, read off its module's
source: the part of the model's identity (:mod:`uqkit.execution.identity`) that stands
for it.

A function's bytecode names the globals it reads. The value of each is identified by

* its module's source, where the source binds it to a literal (``SCALE = 3.0``,
  ``CACHE = {}``): the source holds the value, and a literal container the model fills as
  it runs (a cache, a counter) does not make it another model after a run;
* the module it is imported from (``from settings import SCALE``, ``from . import x``, a
  star import), whose own binding of the name is followed the same way; an installed
  package's module stands by its version;
* the value itself otherwise: an expression run at import (``np.loadtxt(...)``,
  ``float(sys.argv[1])``, ``settings.SCALE``), a name bound twice, in a loop or by a
  function's ``global`` statement, or not bound in the source at all (set from outside).

:func:`global_origin` answers with the module whose source (or version) identifies the
value, or :data:`VALUE`. A module without a readable ``.py`` source (a notebook's, a zip
import, bytecode only) gives :data:`VALUE` for every name.

Example:
    >>> import json
    >>> installed = lambda name: False  # every module an installed one
    >>> global_origin("json", "dumps", installed) is json  # by its version
    True

Imports: the standard library.
"""
import ast
import functools
import importlib.util
import os
import sys

__all__ = ["VALUE", "global_origin"]

#: :func:`global_origin`'s answer where the value itself identifies the global.
VALUE = "value"
#: A binding other than a literal or an import (see the module docstring).
_OTHER = "other"
#: Imports followed from module to module at most (a cycle ends there, with the value).
MAX_DEPTH = 8


def global_origin(module_name, name, is_user_code, depth=0):
    """The module whose source (or installed version) identifies global ``name`` of module
    ``module_name``, or :data:`VALUE` (see the module docstring); ``is_user_code(name)``
    tells the user's modules from installed ones."""
    module = sys.modules.get(module_name)
    if module is None or depth > MAX_DEPTH:
        return VALUE
    if not is_user_code(module_name):
        return module
    bindings = _bindings(module)
    if bindings is None:
        return VALUE
    how = bindings.get(name)
    if how is None and len(bindings.get("*", ())) == 1:  # one star import may have bound it
        how = ("import", bindings["*"][0], name)
    if how == "literal":
        return module
    if isinstance(how, tuple):
        return global_origin(how[1], how[2], is_user_code, depth + 1)
    return VALUE


def _bindings(module):
    """``{name: "literal" | ("import", module, attribute) | "other"}`` of the module's source,
    plus ``"*"``: the modules it star-imports; None without a readable source file."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return None
    package = getattr(module, "__package__", None) or ""
    try:
        return _bindings_in(path, os.stat(path).st_mtime_ns, package)
    except (OSError, SyntaxError, ValueError, ImportError):
        return None


@functools.lru_cache(maxsize=256)
def _bindings_in(path, mtime, package):
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read(), path)
    found, stars = {}, []

    def bind(name, how):
        found[name] = how if found.get(name, how) == how else _OTHER

    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            source = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                 package) if node.level else node.module
            for alias in node.names:
                if alias.name == "*":
                    stars.append(source)
                else:
                    bind(alias.asname or alias.name, ("import", source, alias.name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            literal = len(targets) == 1 and isinstance(targets[0], ast.Name) and \
                _is_literal(node.value)
            for target in targets:
                for name in _names(target):
                    bind(name, "literal" if literal else _OTHER)
        else:  # augmented assignments, loops, with, imports of modules, defs: the value
            for target in _bound_targets(node):
                for name in _names(target):
                    bind(name, _OTHER)
    for node in ast.walk(tree):  # a function that rebinds a global as it runs
        if isinstance(node, ast.Global):
            for name in node.names:
                found[name] = _OTHER
    if stars:
        found["*"] = tuple(stars)
    return found


def _module_level(body):
    """The statements run at import: the module's, and those inside its if, try, with,
    for and while blocks, not inside its functions and classes."""
    for node in body:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _module_level(getattr(node, field, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                yield from _module_level(handler.body)


def _bound_targets(node):
    """The expressions a statement other than an assignment binds names to."""
    if isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    if isinstance(node, ast.Import):
        return [ast.Name(alias.asname or alias.name.split(".")[0]) for alias in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [ast.Name(node.name)]
    return []


def _names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _names(element)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []  # an attribute or a subscript binds no global name


def _is_literal(node):
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
