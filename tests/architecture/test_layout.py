"""The layout's rules, checked on the source: no import cycle among the project's modules
(imports inside functions included: a lazy import is still a dependency), the standalone
packages import nothing of the others, no source file over 600 lines, and every module says
what it holds in a docstring."""
import ast
import io
import pathlib
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("uqkit", "fem", "surrogates", "studies")
MAX_LINES = 600


def _modules():
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _imports(name, path):
    """The project modules that module ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # a name inside a module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan, 1972)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _is_package_parent(a, b):
    """A package's ``__init__`` importing its own submodules is not a cycle of concern."""
    return b.startswith(a + ".") or a.startswith(b + ".")


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules():
    graph = {v: {w for w in ws if not _is_package_parent(v, w)} for v, ws in GRAPH.items()}
    assert _cycles(graph) == []


@pytest.mark.parametrize("package,forbidden", [("fem", ("uqkit", "surrogates", "studies")),
                                               ("surrogates", ("uqkit", "fem", "studies")),
                                               ("uqkit", ("studies",))])
def test_the_standalone_packages_import_nothing_of_the_others(package, forbidden):
    bad = {(v, w) for v, ws in GRAPH.items() if v.split(".")[0] == package for w in ws
           if w.split(".")[0] in forbidden}
    assert not bad


def test_only_the_joining_modules_of_uqkit_import_fem_or_surrogates():
    joining = ("uqkit.adapters", "uqkit.cli.fe")
    bad = {(v, w) for v, ws in GRAPH.items() if v.startswith("uqkit") and v not in joining
           for w in ws if w.split(".")[0] in ("fem", "surrogates")}
    assert not bad


def test_no_source_file_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long


def test_every_module_starts_with_a_docstring():
    bare = [name for name, path in MODULES.items()
            if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text())) is None]
    assert not bare


def _public_definitions(tree):
    """Functions and classes a module defines at its top level without a leading underscore."""
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and not n.name.startswith("_")]


def _declared_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _assigned(node):
    """The names an assignment binds, those of tuple unpacking too (``A, B = ...``)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])
            if isinstance(n, ast.Name)}


def _assigned_names(tree):
    """The names a module's top-level assignments bind."""
    return {name for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
            for name in _assigned(node)}


@pytest.mark.parametrize("name", sorted(n for n, p in MODULES.items()
                                        if not p.name.startswith("_") and "data" not in p.parts))
def test_every_module_lists_its_public_names(name):
    """The API reference documents each module's ``__all__``: a module without one, a name it
    lists but does not have, or a public function or class it forgets would be missing from
    (or broken in) the reference."""
    tree = ast.parse(MODULES[name].read_text())
    declared = _declared_all(tree)
    assert declared is not None, f"{name} has no __all__"
    missing = [d for d in _public_definitions(tree) if d not in declared]
    assert not missing, f"{name}: public but not in __all__: {missing}"
    defined = _assigned_names(tree) | set(_public_definitions(tree))
    unknown = [d for d in declared if d not in defined]
    assert not unknown, f"{name}: __all__ lists names it does not define: {unknown}"


def _doc_comment_lines(text):
    """The line numbers that hold a ``#:`` comment (a comment token, not a string's text)."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return {t.start[0] for t in tokens if t.type == tokenize.COMMENT and t.string.startswith("#:")}


def _documented_names(text):
    """The top-level names of a module that carry documentation, as Sphinx reads it: a
    function's or class's docstring; for an assignment, a ``#:`` comment on the line just
    above it or after its last line, or a string literal just below it."""
    tree, comments, out = ast.parse(text), _doc_comment_lines(text), set()
    for k, node in enumerate(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if ast.get_docstring(node):
                out.add(node.name)
            continue
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        below = tree.body[k + 1] if k + 1 < len(tree.body) else None
        string_below = (isinstance(below, ast.Expr) and isinstance(below.value, ast.Constant)
                        and isinstance(below.value.value, str))
        if node.lineno - 1 in comments or node.end_lineno in comments or string_below:
            out |= _assigned(node)
    return out


def test_the_documentation_finder_reads_each_form():
    source = ('#: doc\nA = 1\nB = 2  #: doc\nC = 3\n"""doc"""\nD = 4\n# a comment\nE = 5\n'
              'def f():\n    """doc"""\ndef g():\n    pass\n#: doc\nH, I = 1, 2\n'
              'J = "#: not a comment"\nK = (1,\n     2)  #: doc\n')
    assert _documented_names(source) == {"A", "B", "C", "f", "H", "I", "K"}


@pytest.mark.parametrize("name", sorted(n for n, p in MODULES.items()
                                        if (p.name == "__init__.py" or not p.name.startswith("_"))
                                        and "data" not in p.parts))
def test_every_name_a_module_lists_is_documented(name):
    """A name in ``__all__`` without a docstring (or a ``#:`` comment, for a constant) is
    left out of the API reference by autodoc, and every link to it is broken: 46 names in
    27 modules were, among them ``fem.newton``'s status codes and three studies' ``run``."""
    text = MODULES[name].read_text()
    tree = ast.parse(text)
    try:
        declared = _declared_all(tree) or []
    except ValueError:  # a package's __all__ made of its lazy exports: defined elsewhere
        declared = []
    defined = _assigned_names(tree) | {n.name for n in tree.body
                                       if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    bare = [d for d in declared if d in defined and d not in _documented_names(text)]
    assert not bare, f"{name}: listed in __all__ but documented nowhere: {bare}"
