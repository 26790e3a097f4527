"""Sphinx extension: writes the API reference's pages before the build reads its sources.

One page per public module of the packages in ``api_packages`` (conf.py), under
``api/generated/``: a package's page shows its docstring, a table of the names in its
``__all__`` (linked to where each is defined and documented) and its submodules; a module's
page documents every name of its ``__all__`` with autodoc. Modules whose name starts with an
underscore, and ``__main__``, are private and left out.

A cross-reference to a name by the package that exports it (``uqkit.propagate``,
``surrogates.BDL.calibrate``), or by its bare name in a docstring of that package, resolves to
where that name is documented (:func:`resolve_exported`), so that the guide can name objects
as users import them.
"""
import functools
import importlib
import inspect
import pathlib
import pkgutil
import re

OUT = "api/generated"
#: The option that documents a class's inherited members, those of the documented packages
#: (:func:`skip_foreign_members`); on a page's directives, since in ``conf.py``'s defaults it
#: would document every member of a package page too.
INHERITED = ":inherited-members:"


def public_modules(package):
    """The package and its public submodules, depth first, in name order."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def _underline(text, char):
    return f"{text}\n{char * len(text)}\n"


def _defined_at(module, name, modules):
    """Where ``module.name`` is documented: the deepest public module below ``module`` that
    lists the same object in its ``__all__``, else ``module`` itself."""
    obj = getattr(module, name)
    if inspect.ismodule(obj):
        return obj.__name__
    home = getattr(obj, "__module__", None)
    candidates = ([home] if isinstance(home, str) else []) + sorted(
        (m for m in modules if m.startswith(module.__name__ + ".")), key=len, reverse=True)
    for candidate in candidates:
        if candidate == module.__name__ or candidate not in modules:
            continue
        other = importlib.import_module(candidate)
        if name in getattr(other, "__all__", ()) and getattr(other, name, None) is obj:
            return f"{candidate}.{name}"
    return f"{module.__name__}.{name}"


def _directive(obj):
    if inspect.isclass(obj):
        return "autoclass"
    return "autofunction" if callable(obj) else "autodata"


def module_page(name, modules):
    """The reST text of one module's page."""
    module = importlib.import_module(name)
    is_package = hasattr(module, "__path__")
    children = [m for m in modules if m.rpartition(".")[0] == name]
    lines = [_underline(name, "="), f".. automodule:: {name}"]
    exported = list(getattr(module, "__all__", ()))
    if is_package:
        lines.append("   :no-members:\n")
        targets = [_defined_at(module, n, modules) for n in exported]
        here = [t for t in targets if t.rpartition(".")[0] == name]
        elsewhere = [t for t in targets if t.rpartition(".")[0] != name]
        if elsewhere:
            lines += [".. rubric:: Exports\n", ".. currentmodule:: None\n",
                      f"Importable as ``from {name} import ...``; each is documented "
                      "where it is defined.\n", ".. autosummary::", ""]
            lines += [f"   ~{t}" for t in elsewhere] + [""]
        if here:
            lines += [".. rubric:: Defined here\n"]
            for target in here:
                directive = _directive(getattr(module, target.rpartition(".")[2]))
                lines.append(f".. {directive}:: {target}")
                if directive == "autoclass":
                    lines.append(f"   {INHERITED}")
            lines.append("")
    else:
        lines.append(f"   :members:\n   {INHERITED}\n")
    if children:
        lines += [".. rubric:: Modules\n", ".. currentmodule:: None\n", ".. autosummary::",
                  "   :toctree:", ""]
        lines += [f"   {c}" for c in children] + [""]
    return "\n".join(lines) + "\n"


def write_pages(app):
    out = pathlib.Path(app.srcdir) / OUT
    out.mkdir(parents=True, exist_ok=True)
    wanted = {}
    for package in app.config.api_packages:
        modules = public_modules(package)
        for name in modules:
            wanted[f"{name}.rst"] = module_page(name, modules)
    for path in out.glob("*.rst"):
        if path.name not in wanted:
            path.unlink()
    for file, text in wanted.items():
        path = out / file
        if not path.exists() or path.read_text() != text:  # unchanged pages stay cached
            path.write_text(text)


def defining_module(obj):
    """The module that defines a class member that is code: a function or method, a
    property's getter, a builtin method's or slot's class (``tuple.count``,
    ``ImportError.msg``: ``builtins``); None for anything else (a value's type says nothing
    of where the member is documented)."""
    owner = getattr(obj, "__objclass__", None)  # a method or slot of a class written in C
    if inspect.isclass(owner):
        return owner.__module__
    target = obj.fget if isinstance(obj, property) else obj
    module = getattr(target, "__module__", None) if inspect.isroutine(target) else None
    return module if isinstance(module, str) else None


def skip_foreign_members(app, what, name, obj, skip, options):
    """``autodoc-skip-member``: a class's pages show the methods and properties it inherits
    from the documented packages (``BDL.fit`` is ``_BaseBDL``'s, a private class with no page
    of its own), not those of scikit-learn, torch or Python (``get_params``, ``forward``,
    ``with_traceback``), which their own documentation holds. scikit-learn's
    ``set_fit_request`` and the like, which it writes onto every estimator class, are
    skipped too."""
    if what not in ("class", "exception"):
        return None
    if re.fullmatch(r"set_\w+_request", name):
        return True
    module = defining_module(obj)
    if module is not None and not _in_packages(module, app.config.api_packages):
        return True
    return None


def _in_packages(module, packages):
    """Whether the dotted ``module`` name belongs to one of the documented ``packages``."""
    return module.split(".")[0] in packages


def public_bases(app, name, obj, options, bases):
    """``autodoc-process-bases``: a private base class of the documented packages (no page
    to link to) is shown as its own bases, so that ``BDL``'s line reads ``Bases:
    MultiOutputRegressorMixin, BaseEstimator``, not ``_BaseBDL``."""
    packages = tuple(app.config.api_packages)
    shown = []
    for base in bases:
        shown += _public_ancestors(base, packages)
    bases[:] = list(dict.fromkeys(shown))


def _public_ancestors(cls, packages):
    module = getattr(cls, "__module__", "") or ""
    if not (cls.__name__.startswith("_") and _in_packages(module, packages)):
        return [cls]
    return [a for base in cls.__bases__ for a in _public_ancestors(base, packages)]


@functools.lru_cache(maxsize=None)
def _public(package):
    return tuple(public_modules(package))


def _import_prefix(parts):
    """(the longest importable module of ``parts``' prefixes, how many parts it takes)."""
    for cut in range(len(parts), 0, -1):
        try:
            return importlib.import_module(".".join(parts[:cut])), cut
        except ImportError:
            continue
    return None, 0


@functools.lru_cache(maxsize=None)  # every page's missing references ask again
def documented_name(target, packages):
    """The dotted name under which ``target`` (a name in one of ``packages``, as a user
    imports it) is documented: where :func:`_defined_at` finds the name that follows its
    module; an attribute, method or field of a class follows its class. None where
    ``target`` names nothing there."""
    parts = target.split(".")
    if parts[0] not in packages:
        return None
    module, cut = _import_prefix(parts)
    if module is None:
        return None
    if cut == len(parts):
        return module.__name__
    if not hasattr(module, parts[cut]):
        return None
    return ".".join([_defined_at(module, parts[cut], _public(parts[0])), *parts[cut + 1:]])


def resolve_exported(app, env, node, contnode):
    """``missing-reference`` (every listener of it runs; the first answer wins): a Python
    name of the documented packages given as a user imports it (or bare, in a docstring of
    that package), resolved where it is documented. On a page outside the API reference and
    the gallery, a name that resolves nowhere is marked to be warned about: a broken link,
    which -W turns into a failed build."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip(".~")
    # the docstring's module; in a package page's table of modules (a module docstring's
    # first line, read with no current module), the page's
    refdoc = node.get("refdoc", "")
    page = refdoc.removeprefix(OUT + "/") if refdoc.startswith(OUT) else ""
    module = node.get("py:module") or page
    parts = module.split(".") if module else []
    packages = tuple(app.config.api_packages)
    # the name as written, then relative to that module and each package above it
    names = [target] + [".".join(parts[:i] + [target]) for i in range(len(parts), 0, -1)]
    domain = env.get_domain("py")
    for name in names:
        real = documented_name(name, packages)
        if real is None:
            continue
        found = domain.resolve_xref(env, refdoc, app.builder, node["reftype"], real, node,
                                    contnode)
        if found is not None:
            return found
    if not refdoc.startswith(("api/", "auto_examples/")):
        # Sphinx warns about it where no other resolver (the built-in types') takes it
        node["refwarn"] = True
    return None


def setup(app):
    app.add_config_value("api_packages", [], "env")
    app.setup_extension("sphinx.ext.autosummary")
    app.connect("builder-inited", write_pages)
    app.connect("autodoc-skip-member", skip_foreign_members)
    app.connect("autodoc-process-bases", public_bases)
    # after Sphinx's own resolvers (the built-in types' is at 900), whose answer comes first
    app.connect("missing-reference", resolve_exported, priority=950)
    return {"parallel_read_safe": True, "version": "1"}
