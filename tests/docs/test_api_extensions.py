"""The documentation's own Sphinx extensions (``docs/_ext``): what the API reference shows of
a class, and how a constant's docstring is read. Plain calls of their hooks, no build."""
import importlib.util
import pathlib
import types

import pytest

EXT = pathlib.Path(__file__).resolve().parents[2] / "docs" / "_ext"


def _extension(name):
    spec = importlib.util.spec_from_file_location(f"docs_ext_{name}", EXT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_pages = _extension("api_pages")
attribute_docstrings = _extension("attribute_docstrings")
APP = types.SimpleNamespace(config=types.SimpleNamespace(
    api_packages=["uqkit", "fem", "surrogates", "studies"]))


def _skipped(what, obj, name="member"):
    return api_pages.skip_foreign_members(APP, what, name, obj, False, {}) is True


def test_every_class_on_a_page_is_documented_with_its_inherited_members():
    """``BDL.fit``, ``save``, ``predict_distribution`` and ``engine_`` are ``_BaseBDL``'s, a
    private class with no page, and autodoc shows inherited members only when asked: the
    reference had no ``BDL.fit`` at all. A module's page asks for it for all its classes."""
    modules = api_pages.public_modules("surrogates")
    page = api_pages.module_page("surrogates.bdl.estimators", modules)
    assert (".. automodule:: surrogates.bdl.estimators\n   :members:\n"
            "   :inherited-members:") in page


def test_a_class_page_keeps_what_it_inherits_from_the_documented_packages():
    from surrogates import BDL

    for name in ("fit", "fit_many", "save", "load", "predict_distribution", "posterior"):
        assert not _skipped("class", getattr(BDL, name), name), name
    assert not _skipped("class", BDL.__dict__.get("engine_") or BDL.engine_, "engine_")


def test_a_class_page_leaves_out_what_scikit_learn_torch_and_python_define():
    from surrogates import BDL, NormalPrior
    from uqkit.execution.runner import FailedRunsError
    from uqkit.execution.dask_cluster import MissingDependencyError

    assert _skipped("class", BDL.get_params, "get_params")
    # scikit-learn writes set_*_request onto the class itself (with metadata routing on)
    written = types.FunctionType(BDL.fit.__code__, {}, "set_fit_request")
    written.__module__ = "surrogates.bdl.estimators"
    assert _skipped("class", written, "set_fit_request")
    assert not _skipped("class", written, "fit")
    assert _skipped("class", NormalPrior.forward, "forward")  # torch.nn.Module's
    assert _skipped("exception", FailedRunsError.with_traceback, "with_traceback")
    assert _skipped("exception", MissingDependencyError.msg, "msg")  # ImportError's slot
    # a plain value says nothing of where it is defined: autodoc's own rule decides
    assert api_pages.skip_foreign_members(APP, "class", "n", 3, False, {}) is None
    # a module's members are not a class's inherited ones
    assert api_pages.skip_foreign_members(APP, "module", "f", len, False, {}) is None


def test_a_private_base_class_is_shown_as_its_own_bases():
    from sklearn.base import BaseEstimator

    from surrogates import BDL
    from surrogates.bdl.estimators import _BaseBDL
    from surrogates.validation import MultiOutputRegressorMixin

    bases = [MultiOutputRegressorMixin, _BaseBDL]
    api_pages.public_bases(APP, "surrogates.BDL", BDL, {}, bases)
    assert bases == [MultiOutputRegressorMixin, BaseEstimator]


@pytest.mark.parametrize("line, lost", [
    ("Edge names: bottom is y = 0, right is x = l.", "Edge names"),
    ("The keys each section may hold (``None``: any).",
     "The keys each section may hold (``None``"),
    ("2: the manifest no longer pins n.", "2"),
])
def test_a_constants_docstring_with_a_colon_stays_a_sentence(line, lost):
    """napoleon read "Edge names: ..." as a field "Type: Edge names" and dropped the words
    before the colon from the sentence."""
    pytest.importorskip("sphinx")
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    def rendered(lines):
        return GoogleDocstring(lines, Config(), what="data", name="X").lines()

    alone = rendered([line])
    assert f":type: {lost}" in alone and line not in alone  # napoleon alone
    out = rendered(attribute_docstrings.protect([line]))
    assert not any(":type:" in text for text in out) and line in out


def test_a_docstring_that_begins_with_a_type_keeps_it():
    pytest.importorskip("sphinx")
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    for line, type_ in [("int: how many.", "int"), ("numpy.ndarray | None: a scale.",
                                                    "numpy.ndarray | None")]:
        lines = attribute_docstrings.protect([line])
        out = GoogleDocstring(lines, Config(), what="data", name="X").lines()
        assert f":type: {type_}" in out


def _undocumented_members(module_name):
    """Public methods and properties of the classes a module lists in ``__all__`` (those it
    defines), their own and those they inherit from the documented packages, with no
    docstring of their own or inherited, as autodoc reads them."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    bare = []
    for name in getattr(module, "__all__", ()):
        cls = getattr(module, name)
        if not inspect.isclass(cls) or cls.__module__ != module_name:
            continue
        for member in dir(cls):
            owner = next((c for c in cls.__mro__ if member in vars(c)), None)
            if member.startswith("_") or owner is None or owner.__module__.split(".")[0] \
                    not in APP.config.api_packages:
                continue
            value = vars(owner)[member]
            code = inspect.isfunction(value) or isinstance(value, (property, classmethod,
                                                                   staticmethod))
            if code and not inspect.getdoc(getattr(cls, member)):
                bare.append(f"{name}.{member}")
    return bare


@pytest.mark.parametrize("package", APP.config.api_packages)
def test_every_public_method_of_a_listed_class_is_documented(package):
    """autodoc leaves out a method without a docstring (its own, or one it inherits): 54
    were missing from the reference, among them ``PropagationResult.ok``, ``n_failed`` and
    ``summary``, ``Prediction.std`` and every baseline's ``fit`` and ``predict``."""
    bare = {m: found for m in api_pages.public_modules(package)
            if (found := _undocumented_members(m))}
    assert not bare


def test_a_bare_name_in_a_package_pages_table_is_read_in_the_pages_package():
    """A module's first line in a package page's table (``studies.moons``'s: "...
    :func:`run` ...") has no current module: ``run`` resolved nowhere. It is now read in the
    page's package, where ``studies.moons.run`` is documented as ``studies.moons.study.run``;
    outside the API pages, a name found nowhere is marked for Sphinx to warn about."""
    asked = []

    class Domain:
        def resolve_xref(self, env, refdoc, builder, reftype, target, node, contnode):
            asked.append((refdoc, target))
            return "link" if target == "studies.moons.study.run" else None

    env = types.SimpleNamespace(get_domain=lambda name: Domain())
    app = types.SimpleNamespace(config=APP.config, builder=None)
    node = {"refdomain": "py", "reftarget": "run", "reftype": "func",
            "refdoc": "api/generated/studies.moons"}
    assert api_pages.resolve_exported(app, env, node, None) == "link"
    assert asked[-1] == ("api/generated/studies.moons", "studies.moons.study.run")
    guide = {"refdomain": "py", "reftarget": "no_such_name", "reftype": "func",
             "refdoc": "guide/studies"}
    assert api_pages.resolve_exported(app, env, guide, None) is None and guide["refwarn"]
