"""Input decks as Jinja2 templates: the files of one run directory, made from a template.

A template is one file or a directory. Its files are of two kinds:

* **templates**, rendered with Jinja2 (``{{ E }}``, ``{{ "%.8e" | format(E) }}``, ``{% for %}``
  loops for decks that repeat blocks, ``{% if %}``) into the run directory;
* **static files** (meshes, include files, binary data), copied unchanged, or linked.

Which is which: the files that match one of the ``render`` glob patterns are templates; with
no patterns, every text file that uses the template syntax is one, and a file without it is
copied byte for byte. ``{% include %}`` reads the template's own files. Single braces and
percent signs of a deck's own syntax (Tcl's ``{...}``, ``%`` comments) are plain text to
Jinja2; a deck that needs ``{{``, ``{%`` or ``{#`` itself can change the delimiters
(``options={"variable_start_string": "<<", "variable_end_string": ">>"}``) or wrap the text
in ``{% raw %}...{% endraw %}``.

Rendering is strict: a placeholder that names no variable is an error before any run
(:meth:`DeckTemplate.check`, with the file and line), and so is an input that no file uses.
Blocks' own lines leave no blank lines (``trim_blocks`` and ``lstrip_blocks``), a file's
last newline is kept, and so are its line ends (those of most of its lines: CRLF stays
CRLF; ``newline_sequence`` in ``options`` sets one for every file). A file without template
syntax is copied byte for byte.

May import jinja2, numpy and the standard library.
"""
import fnmatch
import hashlib
import os
import shutil
import stat
from pathlib import Path

__all__ = ["DEFAULT_OPTIONS", "STATIC_MODES", "TemplateError", "DeckTemplate"]

#: The Jinja2 environment settings a template starts from (``options`` update them).
DEFAULT_OPTIONS = {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True}
#: How static files reach a run directory.
STATIC_MODES = ("copy", "link")


class TemplateError(ValueError):
    """A template that cannot be rendered: bad syntax, an undefined placeholder, an input
    that no file uses. The message names the file and line."""


class DeckTemplate:
    """The files of a run directory: templates rendered with Jinja2, static files copied.

    Args:
        path: a template file, or a directory of files (sub-directories included).
        render: glob patterns of the directory's files to render (relative paths such as
            ``"*.inp"``); None: every text file that uses the template syntax.
        options: Jinja2 ``Environment`` settings over :data:`DEFAULT_OPTIONS` (delimiters,
            ``trim_blocks``, ...).
        static: ``"copy"`` (default) or ``"link"`` (a symbolic link to the template's file:
            no copy of a large mesh, but a program that writes to the file changes the
            template).

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "deck.inp").write_text("*ELASTIC\\n{{ '%.4e' | format(E) }}, 0.3\\n")
        >>> deck = DeckTemplate(folder / "deck.inp")
        >>> sorted(deck.variables)
        ['E']
        >>> run_dir = pathlib.Path(tempfile.mkdtemp())
        >>> deck.render_into(run_dir, {"E": 210000.0})
        >>> (run_dir / "deck.inp").read_text()
        '*ELASTIC\\n2.1000e+05, 0.3\\n'
    """

    def __init__(self, path, render=None, options=None, static="copy"):
        import jinja2

        self.path = Path(path).resolve()
        if not self.path.exists():
            raise TemplateError(f"no template {str(path)!r}: no such file or directory")
        if static not in STATIC_MODES:
            raise ValueError(f"static must be one of {STATIC_MODES}, got static={static!r}")
        self.render = None if render is None else [render] if isinstance(render, str) \
            else list(render)
        self.options = {**DEFAULT_OPTIONS, **(options or {})}
        self.static = static
        try:
            env = jinja2.Environment(**self.options)
        except TypeError as exc:
            raise ValueError(f"bad template options {options!r}: {exc}") from None
        self.sources = {}  # relative path -> template text
        self.newlines = {}  # relative path -> the line end a template is rendered with
        self.statics = []  # relative paths copied unchanged
        self.variables = {}  # variable -> (relative path, line) of its first use
        self.global_names = {}  # Jinja2's global names the files use, as variables
        if self.path.is_file():
            files = [(self.path.name, self.path)]
        else:
            files = sorted((p.relative_to(self.path).as_posix(), p)
                           for p in self.path.rglob("*") if p.is_file())
            if not files:
                raise TemplateError(f"the template directory {str(path)!r} holds no files")
        # the modes of executable files, given to their copies (a run script the command
        # starts, ./solver.sh, lost its x bit: "Permission denied")
        self.modes = {rel: mode for rel, full in files
                      if (mode := stat.S_IMODE(full.stat().st_mode)) & 0o111}
        self._names = {rel for rel, _ in files}  # what {% include %} may name
        self.included = set()  # the files templates include
        self.included_variables = {}  # their placeholders -> (file, line)
        for rel, full in files:
            text = self._template_text(rel, full, env)
            if text is None:
                self.statics.append(rel)
            else:
                self.sources[rel] = text
        if self.render is not None:
            unmatched = [p for p in self.render
                         if not any(fnmatch.fnmatch(rel, p) for rel, _ in files)]
            if unmatched:
                raise TemplateError(f"render pattern(s) {unmatched} match no file of "
                                    f"{str(path)!r}")
        self._compiled = None

    def _template_text(self, rel, full, env):
        """The text of a file to render, or None for a static file; records its variables."""
        import jinja2
        from jinja2 import meta

        wanted = (self.path.is_file() or self.render is None
                  or any(fnmatch.fnmatch(rel, p) for p in self.render))
        if not wanted:
            return None
        text = _read_text(full)
        if text is None:
            if self.render is not None and not self.path.is_file():
                raise TemplateError(f"{rel}: matches render={self.render} but is not a text "
                                    "file (it holds NUL bytes)") from None
            return None
        try:
            tree = env.parse(text, name=rel)
            env.compile(tree, name=rel)  # what parsing does not check: filters, tests exist
        except jinja2.TemplateSyntaxError as exc:
            hint = "" if isinstance(exc, jinja2.TemplateAssertionError) else (
                " (a deck whose own syntax uses '{{', '{%' or '{#' can change the delimiters "
                "or use {% raw %})")
            raise TemplateError(f"{rel}, line {exc.lineno}: {exc.message}{hint}") from None
        self._check_includes(tree, rel, env)
        undeclared = meta.find_undeclared_variables(tree)
        if not undeclared and self.render is None and not self.path.is_file():
            if not any(mark and mark in text for mark in _syntax_marks(env)):
                return None  # plain text: copied byte for byte
        if "newline_sequence" not in self.options:  # rendered with the file's own line ends
            self.newlines[rel] = _line_end(text)
        for node in tree.find_all(jinja2.nodes.Name):
            if node.name in undeclared and node.name not in self.variables:
                self.variables[node.name] = (rel, node.lineno)
            elif node.name in env.globals and node.ctx == "load":
                # Jinja2's own names (range, dict, ...), which a variable of the name hides:
                # an input named range was "used by no template file"
                self.global_names.setdefault(node.name, (rel, node.lineno))
        return text

    def check(self, names):
        """Refuse placeholders that are not in ``names``, and ``names`` no file uses.

        Raises:
            TemplateError: naming the file and line of the first undefined placeholder, or
                the unused names.
        """
        unknown = sorted(set(self.variables) - set(names), key=lambda v: self.variables[v])
        if unknown:
            rel, line = self.variables[unknown[0]]
            raise TemplateError(f"{rel}, line {line}: the placeholder {unknown[0]!r} names no "
                                f"input or constant (known: {', '.join(sorted(names))})")
        if self.render is not None:
            self._warn_unrendered(set(names))

    def _warn_unrendered(self, names):
        """Warn of a static file (one no ``render`` pattern matches) whose placeholders name
        inputs or constants: it reaches the program with ``{{ E }}`` as it stands."""
        import warnings

        import jinja2
        from jinja2 import meta

        root = self.path.parent if self.path.is_file() else self.path
        env = self.environment()
        marks = [mark.encode() for mark in _syntax_marks(env) if mark]
        for rel in self.statics:
            if rel in self.included or not _holds_any(root / rel, marks):
                continue  # a large mesh is scanned, not read whole and parsed
            text = _read_text(root / rel)
            try:
                used = sorted(meta.find_undeclared_variables(env.parse(text))
                              & names) if text is not None else []
            except jinja2.TemplateSyntaxError:
                continue
            if used:
                warnings.warn(f"{rel} uses the placeholder(s) {used} but matches no render "
                              f"pattern {self.render}: it is copied as it stands, placeholders "
                              "and all; add a pattern that matches it", UserWarning,
                              stacklevel=3)

    def digest(self):
        """SHA-256 of every file (path and bytes), the render patterns and the options."""
        h = hashlib.sha256(repr((self.render, sorted(self.options.items()), self.static,
                                 self.path.is_file())).encode())
        root = self.path.parent if self.path.is_file() else self.path
        for rel in sorted([*self.sources, *self.statics]):
            h.update(rel.encode() + b"\0")
            h.update(hashlib.sha256((root / rel).read_bytes()).digest())
        return h.hexdigest()

    def _check_includes(self, tree, rel, env):
        """Refuse an ``{% include %}``, ``{% import %}`` or ``{% extends %}`` of a file that is
        not one of the template's own: the model's identity covers those files' bytes alone,
        so an edit of another would be served old results."""
        import jinja2

        kinds = (jinja2.nodes.Include, jinja2.nodes.Import, jinja2.nodes.FromImport,
                 jinja2.nodes.Extends)
        for node in tree.find_all(kinds):
            target = node.template
            names = ([target.value] if isinstance(target, jinja2.nodes.Const) else
                     [n.value for n in getattr(target, "items", ())
                      if isinstance(n, jinja2.nodes.Const)] or [None])
            if any(name not in self._names for name in names):
                shown = names[0] if names != [None] else "a computed name"
                raise TemplateError(
                    f"{rel}, line {node.lineno}: it includes {shown!r}, which is not a file of "
                    f"the template {str(self.path)!r}; put the file in a template directory "
                    "beside it and name it by its path there")
            for name in names:  # its placeholders are the including file's (a static file
                # included by a rendered one: its input was "used by no template file")
                self._include(name, env)

    def _include(self, name, env):
        """Record the variables of the template's file ``name``, which a template includes,
        and of what it includes in turn."""
        import jinja2
        from jinja2 import meta

        if name in self.included:
            return
        self.included.add(name)
        text = self._load(name)
        if text is None:  # binary: nothing Jinja2 can include
            return
        try:
            tree = env.parse(text, name=name)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{name}, line {exc.lineno}: {exc.message}") from None
        for var in meta.find_undeclared_variables(tree):  # or set by the including file:
            # counted as used, not refused as unknown (a {% set %} above the include)
            line = next(n.lineno for n in tree.find_all(jinja2.nodes.Name) if n.name == var)
            self.included_variables.setdefault(var, (name, line))
        self._check_includes(tree, name, env)

    def _load(self, name):
        """The text of the template's file ``name``, for ``{% include %}``."""
        if name in getattr(self, "sources", {}):
            return self.sources[name]
        root = self.path.parent if self.path.is_file() else self.path
        return _read_text(root / name) if name in getattr(self, "_names", ()) else None

    def environment(self):
        """A strict Jinja2 environment with this template's options (an undefined variable
        raises); ``{% include %}`` reads the template's own files."""
        import jinja2

        return jinja2.Environment(undefined=jinja2.StrictUndefined,
                                  loader=jinja2.FunctionLoader(self._load), **self.options)

    def variables_of(self, text):
        """The variables that a template string (a command argument, say) uses."""
        import jinja2
        from jinja2 import meta

        try:
            return set(meta.find_undeclared_variables(self.environment().parse(text)))
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{text!r}: {exc.message}") from None

    def _templates(self):
        if self._compiled is None:
            env = self.environment()
            newlines = getattr(self, "newlines", {})  # a template pickled before 0.3 has none
            self._compiled = {
                rel: (env.overlay(newline_sequence=newlines[rel]) if rel in newlines else env)
                .from_string(text) for rel, text in self.sources.items()}
        return self._compiled

    def render_into(self, run_dir, variables):
        """Write the rendered templates and the static files into ``run_dir`` (which
        exists)."""
        root = self.path.parent if self.path.is_file() else self.path
        made = set()
        for rel in [*self.sources, *self.statics]:
            parent = os.path.dirname(rel)
            if parent and parent not in made:
                (run_dir / parent).mkdir(parents=True, exist_ok=True)
                made.add(parent)
        for rel, template in self._templates().items():
            try:
                text = template.render(variables)
            except Exception as exc:  # noqa: BLE001 - the deck's own expression failed
                raise TemplateError(f"{rel}: rendering failed: {type(exc).__name__}: {exc} "
                                    f"(with the run's variables "
                                    f"{ {k: variables[k] for k in sorted(variables)} })") from None
            (run_dir / rel).write_bytes(text.encode("utf-8", "surrogateescape"))
        for rel in self.statics:
            if self.static == "link":
                os.symlink(root / rel, run_dir / rel)
            else:
                shutil.copyfile(root / rel, run_dir / rel)
        for rel, mode in getattr(self, "modes", {}).items():  # none in a template of 0.2
            if not (self.static == "link" and rel in self.statics):  # the x bits, added
                target = run_dir / rel
                os.chmod(target, stat.S_IMODE(target.stat().st_mode) | (mode & 0o111))

    def files(self):
        """Every file a run directory gets, relative paths."""
        return [*self.sources, *self.statics]

    def __getstate__(self):  # compiled templates hold code objects: compiled again in workers
        return {**self.__dict__, "_compiled": None}


def _holds_any(path, marks, block=1 << 20):
    """Whether the file holds one of the byte strings ``marks``, read a block at a time."""
    keep = max(map(len, marks)) - 1
    tail = b""
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(block), b""):
            data = tail + chunk
            if any(m in data for m in marks):
                return True
            tail = data[-keep:] if keep else b""
    return False


def _syntax_marks(env):
    """The strings that start Jinja2 syntax in ``env``: a file with none of them is plain
    text. (Rendering it and comparing took a file with a carriage return for a template,
    since Jinja2 writes its line ends as newlines: a CRLF mesh was copied with LF ends, and
    binary data without NUL bytes came out changed.)"""
    return (env.block_start_string, env.variable_start_string, env.comment_start_string,
            env.line_statement_prefix, env.line_comment_prefix)


def _line_end(text):
    r"""The line end most of a file's lines have: ``"\r\n"``, ``"\r"`` or ``"\n"`` (ties and
    files of one line without an end: ``"\n"``). Jinja2 renders every line end as its
    ``newline_sequence``, ``"\n"`` by default: a CRLF deck came out with LF ends."""
    crlf = text.count("\r\n")
    counts = {"\n": text.count("\n") - crlf, "\r\n": crlf, "\r": text.count("\r") - crlf}
    return max(counts, key=lambda end: (counts[end], end == "\n"))


def _read_text(path):
    """A file's text, or None for a binary file (one that holds NUL bytes). Text that is not
    UTF-8 (a deck with Latin-1 comments) is read with its undecodable bytes as surrogates
    (``surrogateescape``), which writing back as UTF-8 restores byte for byte: such a file
    was taken for a binary one and copied with its placeholders unrendered."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", "surrogateescape")
