"""A study of an external program described in one TOML file (``uqkit run CONFIG.toml``).

Paths are relative to the file. Every section and key is checked: a misspelt key, an unknown
distribution, a missing template or a bad regular expression is a :class:`ConfigError` that
names the key and the bad value, before any run. Format::

    [inputs]                        # name = distribution (uqkit.inputs.distributions' specs)
    E = "lognormal(mean=210000, std=10500)"
    P = "lognormal(mean=1000, std=100)"
    h = "normal(40, 1)"

    [correlation]                   # optional: a Nataf (Gaussian) copula of the inputs
    matrix = [[1, 0, 0], [0, 1, 0.3], [0, 0.3, 1]]

    [model]
    template = "calculix/cantilever.inp"   # a file or a directory
    command = ["ccx", "-i", "cantilever"]
    timeout = 60                    # seconds per run (optional)
    constants = { L = 1000.0, b = 20.0, nu = 0.3, n = 40 }
    # optional: keep ("none", "failed", "all"), workdir, render, env, shell,
    # cores_per_run, chunk_size, static, template_options

    # or, instead of a program, a Python function of one run (uqkit.PerRunModel):
    # python = "beam.py:deflection"  # FILE.py:NAME (next to this file) or MODULE:NAME
    # outputs = ["v_tip"]            # its outputs' names; then no [outputs] section
    # keywords = true                # function(E=..., P=..., h=...); false: function(x)

    [outputs.v_tip]                 # one table per output, one of three forms:
    regex = '^\\s*\\d+\\s+\\S+\\s+(\\S+)\\s+\\S+\\s*$'    # + file, group, match, size
    file = "cantilever.dat"
    # table = "out.csv", column = "u", row = -1   (+ delimiter, comments, skip_rows, size)
    # json = "out.json", key = "results.tip"      (+ size)

    [sampling]                      # optional
    n = 200                         # --n overrides
    rule = "random"                 # random, lhs, sobol, halton
    seed = 0

    [sobol]                         # optional: Sobol' indices of every output
    n = 256                         # base sample, a power of 2 (n (d + 2) runs)
    bootstrap = 100                 # or replicates = 8: intervals that hold at small n

    [failure]                       # optional: P[output < below] or P[output > above]
    output = "v_tip"
    below = -18.0
    method = "mc"                   # mc, form, sorm, is, subset, active + their options
    n = 20000

May import the rest of :mod:`uqkit`.
"""
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SECTIONS", "OUTPUT_FORMS", "PYTHON_MODEL_KEYS", "MODEL_KINDS", "FAILURE_KEYS",
           "ConfigError", "StudyConfig", "load_config", "send_by_value", "Margin"]

#: The keys each section may hold (``None``: any key, as in [inputs]).
SECTIONS = {
    "inputs": None, "correlation": {"matrix"},
    "model": {"template", "command", "timeout", "constants", "keep", "workdir", "render",
              "env", "shell", "cores_per_run", "chunk_size", "static", "template_options",
              "python", "outputs", "keywords"},
    "outputs": None, "sampling": {"n", "rule", "seed"}, "sobol": {"n", "bootstrap", "seed",
                                                                "replicates"},
    "failure": None,
}
#: The keys of an output table, by its form.
OUTPUT_FORMS = {"regex": {"file", "group", "match", "size"},
                "table": {"column", "row", "delimiter", "comments", "skip_rows", "size",
                          "header"},
                "json": {"key", "size"}}
#: The keys of [model] for a Python function of one run (``python = ...``).
PYTHON_MODEL_KEYS = {"python", "outputs", "keywords", "cores_per_run", "chunk_size"}
#: The kinds of [model]'s keys whose Python error named no key ("'int' object is not
#: iterable"), or which a string passed (``shell = "false"`` was true).
MODEL_KINDS = {"constants": (dict, "a table of names and values"),
               "template_options": (dict, "a table of Jinja2 options"),
               "render": ((str, list), "a file pattern or a list of them"),
               "shell": (bool, "true or false"),
               "command": ((str, list), "a string or a list of strings")}
#: Keys of [failure] besides the method's own options.
FAILURE_KEYS = {"output", "below", "above", "method", "seed"}


class ConfigError(ValueError):
    """A bad study file: the message names the file, the key and the bad value."""


@dataclass
class StudyConfig:
    """A parsed study file: the inputs, the model and the analyses' settings."""

    path: Path
    inputs: object
    model: object
    sampling: dict
    sobol: dict | None
    failure: dict | None


def load_config(path):
    """Read and check a study file (see the module docstring).

    Raises:
        ConfigError: naming the key and the bad value.
    """
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a study file (a .toml file)") from None
    except PermissionError:
        raise ConfigError(f"{path}: not readable (permission denied)") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file in UTF-8 ({exc.reason} at byte "
                          f"{exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    where = str(path)
    _known(raw, set(SECTIONS), where, "section")
    for name, keys in SECTIONS.items():
        if name in raw:
            if not isinstance(raw[name], dict):
                raise ConfigError(f"{where}: [{name}] must be a table")
            if keys is not None:
                _known(raw[name], keys, f"{where}: [{name}]", "key")
    python = isinstance(raw.get("model"), dict) and "python" in raw["model"]
    for name in ("inputs", "model") if python else ("inputs", "model", "outputs"):
        if not raw.get(name):
            raise ConfigError(f"{where}: the [{name}] section is missing or empty")
    inputs = _inputs(raw, where)
    model = _model(raw, path.parent, inputs.names, where)
    sampling = {"n": 100, "rule": "random", "seed": 0, **raw.get("sampling", {})}
    sobol = raw.get("sobol")
    if sobol is not None:
        if "replicates" in sobol and "bootstrap" in sobol:
            raise ConfigError(f"{where}: [sobol] bootstrap = {sobol['bootstrap']!r} and "
                              f"replicates = {sobol['replicates']!r} both give intervals: "
                              "keep one of them")
        sobol = {"n": 256, "seed": 0, "replicates": None,
                 "bootstrap": None if "replicates" in sobol else 100, **sobol}
        n = sobol["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 2 or n & (n - 1):
            raise ConfigError(f"{where}: [sobol] n must be a power of 2, got {n!r}")
        from ..sensitivity.pick_freeze import _check_intervals, _check_replicates
        from ..validation import check_seed

        try:  # now, not once the main study has run
            if sobol["replicates"] is None:
                _check_intervals(sobol["bootstrap"], 0.95)
            else:
                _check_replicates(sobol["replicates"], n)
            check_seed(sobol["seed"])
        except ValueError as exc:
            raise ConfigError(f"{where}: [sobol] {exc}") from None
    failure = _failure(raw.get("failure"), model.output_names, where)
    if failure is not None:
        _check_failure_options(failure, inputs, f"{where}: [failure]")
    return StudyConfig(path, inputs, model, sampling, sobol, failure)


def _known(table, keys, where, what):
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(f"{where}: unknown {what} {unknown[0]!r} (known: "
                          f"{', '.join(sorted(keys))})")


def _inputs(raw, where):
    from ..inputs.random_inputs import RandomInputs

    inputs = {}
    for name, spec in raw["inputs"].items():
        try:
            inputs[name] = RandomInputs.from_spec({name: spec})
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: [inputs] {name} = {spec!r}: {exc}") from None
    rv = RandomInputs.from_spec(raw["inputs"])
    if "correlation" in raw:
        try:
            rv = rv.with_copula("nataf", raw["correlation"].get("matrix"))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: [correlation] matrix: {exc}") from None
    return rv


def _model(raw, folder, input_names, where):
    from .model import ExternalModel
    from .templates import TemplateError

    settings = dict(raw["model"])
    if "python" in settings:
        return _python_model(raw, folder, input_names, where)
    wrong = sorted(set(settings) & (PYTHON_MODEL_KEYS - {"cores_per_run", "chunk_size"}))
    if wrong:
        raise ConfigError(f"{where}: [model] {wrong[0]!r} is for a Python function (python = "
                          "\"FILE.py:NAME\"), not for a program's template and command")
    for key in ("template", "command"):
        if key not in settings:
            raise ConfigError(f"{where}: [model] needs {key!r}")
    for key, (kinds, what) in MODEL_KINDS.items():
        value = settings.get(key)
        if key in settings and (not isinstance(value, kinds) or (
                isinstance(value, list) and not all(isinstance(v, str) for v in value))):
            raise ConfigError(f"{where}: [model] {key} must be {what}, got {value!r}")
    template = folder / str(settings.pop("template"))
    if not template.exists():
        raise ConfigError(f"{where}: [model] template {str(template)!r}: no such file or "
                          "directory")
    if template.is_dir() and Path(where).resolve().is_relative_to(template.resolve()):
        raise ConfigError(f"{where}: [model] template {str(template)!r} is a folder that holds "
                          "this study file: every run would get it as a template file, and an "
                          "edit of the file's analyses would make the runs another model's; "
                          "put the template's files in a folder of their own")
    if "workdir" in settings:
        if not isinstance(settings["workdir"], str) or not settings["workdir"]:
            raise ConfigError(f"{where}: [model] workdir must be a path (a string), got "
                              f"workdir = {settings['workdir']!r}")
        settings["workdir"] = folder / settings["workdir"]
    outputs = {name: _output(spec, f"{where}: [outputs.{name}]")
               for name, spec in raw["outputs"].items()}
    try:
        return ExternalModel(template, outputs=outputs, input_names=input_names, **settings)
    except TemplateError as exc:
        raise ConfigError(f"{where}: [model] template: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: [model] {exc}") from None


def _python_model(raw, folder, input_names, where):
    """The :class:`uqkit.PerRunModel` of ``[model] python = ...``."""
    from ..execution.per_run import PerRunModel

    settings = dict(raw["model"])
    wrong = sorted(set(settings) - PYTHON_MODEL_KEYS)
    if wrong:
        raise ConfigError(f"{where}: [model] {wrong[0]!r} is for a program, not for a Python "
                          f"function (python = {settings['python']!r}; its keys: "
                          f"{', '.join(sorted(PYTHON_MODEL_KEYS))})")
    if "outputs" in raw:
        raise ConfigError(f"{where}: [outputs] reads a program's files; a Python function "
                          "returns its outputs, named by [model] outputs = [...]")
    names = settings.get("outputs")
    if not isinstance(names, list) or not names or \
            not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"{where}: [model] outputs must list the function's outputs' names, "
                          f"e.g. outputs = [\"v_tip\"], got {names!r}")
    keywords = settings.get("keywords", True)
    if not isinstance(keywords, bool):
        raise ConfigError(f"{where}: [model] keywords must be true or false, got {keywords!r}")
    function = _python_function(settings["python"], folder, f"{where}: [model] python")
    if keywords:
        _check_signature(function, input_names, f"{where}: [model] python")
    try:
        return PerRunModel(function, input_names=input_names, output_names=names,
                           keywords=keywords, chunk_size=settings.get("chunk_size"),
                           cores_per_run=settings.get("cores_per_run", 1))
    except ValueError as exc:
        raise ConfigError(f"{where}: [model] {exc}") from None


def _python_function(spec, folder, where):
    """The function that ``"FILE.py:NAME"`` (a file, relative to ``folder``) or
    ``"MODULE:NAME"`` names. A file is loaded as module ``uqkit_run_STEM``, with its folder
    on ``sys.path`` (for the helpers it imports), and sent to workers by value."""
    import importlib
    import importlib.util
    import sys

    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ConfigError(f"{where} = {spec!r} must be \"FILE.py:NAME\" or "
                          "\"MODULE:NAME\"")
    source, name = spec.split(":")
    try:
        if source.endswith(".py"):
            path = (folder / source).resolve()
            if not path.is_file():
                raise ConfigError(f"{where} = {spec!r}: no such file {str(path)!r}")
            _fresh_imports(path.parent)
            module_name = f"uqkit_run_{path.stem}"
            module = importlib.util.module_from_spec(
                importlib.util.spec_from_file_location(module_name, path))
            sys.modules[module_name] = module
            module.__spec__.loader.exec_module(module)
            import cloudpickle

            cloudpickle.register_pickle_by_value(module)
        else:
            _fresh_imports(folder.resolve())
            module = importlib.import_module(source)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import
        raise ConfigError(f"{where} = {spec!r}: importing {source!r} raised "
                          f"{type(exc).__name__}: {exc}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ConfigError(f"{where} = {spec!r}: {source!r} has no function {name!r}"
                          + ("" if function is None else f" (it is {type(function).__name__})"))
    return function


def send_by_value(folder):
    """Have cloudpickle send every module loaded from ``folder`` (the study's function's and
    the helpers it imports) to workers by value: a Dask worker that cannot import them
    (another machine, another working directory) failed with "Scheduler and Client have
    different environments". For Dask only: by value, a module's globals that cannot be
    pickled (a lock, a library handle) would fail every run of a local pool, whose workers
    import the modules themselves."""
    import sys

    import cloudpickle

    from ..execution.sources import _is_user_code

    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and Path(file).resolve().is_relative_to(folder) and \
                _is_user_code(name):  # not an installed package's (uqkit's, in a checkout)
            cloudpickle.register_pickle_by_value(module)


def _fresh_imports(folder):
    """Put ``folder`` first on ``sys.path`` (the study's own modules import from beside it)
    and forget the user's modules loaded from it before, and those of the names of its
    modules loaded from elsewhere (another study's ``helper.py``), so that a study file
    loaded in this process (a notebook, a test) runs the modules beside it as they are on
    disk now. Installed packages' modules stay."""
    import importlib
    import sys

    if str(folder) in sys.path:
        sys.path.remove(str(folder))
    sys.path.insert(0, str(folder))
    own = {p.stem for p in folder.glob("*.py")} | \
        {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    from ..execution.identity import user_modules

    for name in user_modules():  # an installed package's (uqkit's own, in a checkout) stays
        file = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(file, str) and (
                name.split(".")[0] in own or Path(file).resolve().is_relative_to(folder)):
            del sys.modules[name]
    importlib.invalidate_caches()


def _check_signature(function, input_names, where):
    """A function called with the inputs as keywords must take them all."""
    import inspect

    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without one: its runs will say
        return
    try:
        signature.bind(**{name: 0.0 for name in input_names})
    except TypeError as exc:
        name = getattr(function, "__name__", type(function).__name__)
        raise ConfigError(f"{where}: {name}{signature} cannot take the inputs "
                          f"{', '.join(input_names)} as keywords ({exc}); name its arguments "
                          "as [inputs] does, or set keywords = false to get them as one "
                          "array") from None


def _output(spec, where):
    from .outputs import JSONValue, Regex, Table

    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a table with regex, table or json")
    forms = [f for f in OUTPUT_FORMS if f in spec]
    if len(forms) != 1:
        raise ConfigError(f"{where}: give exactly one of regex, table or json, got "
                          f"{forms or 'none'}")
    form = forms[0]
    _known(spec, OUTPUT_FORMS[form] | {form}, where, "key")
    options = {k: v for k, v in spec.items() if k != form}
    try:
        if form == "regex":
            return Regex(spec["regex"], **options)
        if form == "table":
            if "column" not in options:
                raise ValueError("a table output needs 'column'")
            return Table(spec["table"], **options)
        if "key" not in options:
            raise ValueError("a json output needs 'key'")
        return JSONValue(spec["json"], **options)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _failure(section, output_names, where):
    if section is None:
        return None
    where = f"{where}: [failure]"
    settings = {"method": "mc", "seed": 0, **section}
    if not isinstance(settings["method"], str):
        raise ConfigError(f"{where} method = {settings['method']!r} must be a method's name")
    from ..validation import check_seed

    try:
        check_seed(settings["seed"])
    except ValueError as exc:
        raise ConfigError(f"{where} {exc}") from None
    output = settings.get("output")
    if output not in output_names:
        raise ConfigError(f"{where} output = {output!r} is not an output (outputs: "
                          f"{', '.join(output_names)})")
    limits = [k for k in ("below", "above") if k in settings]
    if len(limits) != 1:
        from ..reliability.api import METHODS, method_options

        options = set(FAILURE_KEYS) | {"failed_runs"} | set(method_options(
            settings["method"])) if settings["method"] in METHODS else set(FAILURE_KEYS)
        unknown = sorted(set(settings) - options)
        raise ConfigError(f"{where}: give exactly one of below or above (failure when the "
                          f"output is below or above it), got {limits or 'none'}"
                          + (f"; unknown key(s) {unknown}" if unknown else ""))
    limit = settings[limits[0]]
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or \
            not math.isfinite(limit):
        raise ConfigError(f"{where} {limits[0]} = {limit!r} must be a finite number")
    from ..reliability.api import METHODS, method_options

    if settings["method"] not in METHODS:
        raise ConfigError(f"{where} method = {settings['method']!r} is not one of "
                          f"{', '.join(METHODS)}")
    # failure_probability's own failed_runs, and the method's options
    allowed = set(method_options(settings["method"])) - {"form_result"} | {"failed_runs"}
    _known({k: v for k, v in settings.items() if k not in FAILURE_KEYS}, allowed, where,
           f"option of method {settings['method']!r}")
    return settings


class _Unrun(BaseException):
    """Raised by the stand-in limit state of :func:`_check_failure_options` at its first run
    (a BaseException: no run's own failure handling takes it for the model's error)."""


def _unrun(X):
    raise _Unrun


def _check_failure_options(settings, inputs, where):
    """Refuse [failure]'s option values now, as its method checks them before its first
    run (:func:`uqkit.reliability.failure_probability` on a stand-in limit state that stops
    at its first run): ``n = "100"`` was refused only after the main study and the Sobol'
    runs, and the message did not name the section."""
    from ..reliability import failure_probability

    options = {k: v for k, v in settings.items() if k not in FAILURE_KEYS}
    try:
        failure_probability(_unrun, inputs, method=settings["method"], seed=settings["seed"],
                            executor="serial", **options)
    except _Unrun:
        return
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where} {exc}") from None


class Margin:
    """A limit state from one output of a model: ``output - below`` (failure when the output
    falls below the limit) or ``above - output``; the model's status and reasons pass on.

    >>> g = Margin(lambda X: X * [1.0, 2.0], column=1, below=3.0)
    >>> margin, status, reasons = g(np.array([[1.0, 1.0], [1.0, 2.0]]))
    >>> margin.tolist()
    [-1.0, 1.0]
    """

    def __init__(self, model, column, below=None, above=None):
        self.model, self.column, self.below, self.above = model, column, below, above
        for attr in ("input_names", "takes_context", "cores_per_run", "chunk_size",
                     "rows_saved"):
            if hasattr(model, attr):
                setattr(self, attr, getattr(model, attr))

    def __call__(self, X, context=None):
        from ..execution.model import ModelOutput, call_model, normalise_output

        out = normalise_output(call_model(self.model, X, context), len(X))
        y = out.values[:, self.column] if out.values.shape[1] > self.column else \
            np.full(len(X), np.nan)
        margin = y - self.below if self.below is not None else self.above - y
        # the model's answers kept from an interrupted run stay counted as such
        return ModelOutput(margin, out.status, out.reasons, kept=out.kept)

    def describe(self):
        """The margin's identity for the study store: which output, its limit, and the
        model's own identity."""
        from ..execution.identity import describe_model

        return {"margin": {"column": self.column, "below": self.below, "above": self.above},
                "model": describe_model(self.model)}
