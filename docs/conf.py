"""Sphinx configuration of uqkit's documentation.

Build (warnings as errors, as CI does)::

    pip install -c constraints.txt -e ".[docs]"
    python -m sphinx -W -b html docs docs/_build/html

The API pages are generated at build time from the packages' ``__all__`` by
``_ext/api_pages.py``; the gallery runs every ``plot_*.py`` script in ``examples/`` at the
small sizes of ``_ext/gallery_args.py``.
"""
import importlib.util
import os
import pathlib
import shutil
import sys
from importlib.metadata import version as _version

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

project = "uqkit"
author = "the uqkit developers"
copyright = "2026, the uqkit developers"
release = _version("uqkit")
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "api_pages",
    "attribute_docstrings",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5"]
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

# --- API reference ------------------------------------------------------------------------
api_packages = ["uqkit", "fem", "surrogates", "studies"]
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": True}
autodoc_typehints = "none"
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False
add_module_names = False

# --- gallery --------------------------------------------------------------------------------
#: Examples that need a program or a package on the machine: without it the page shows the
#: code only. Name -> (whether it is there, how to install it).
NEEDS = {"plot_calculix_cantilever.py": (lambda: shutil.which("ccx"),
                                         "apt-get install calculix-ccx"),
         "plot_opensees_cantilever.py": (lambda: importlib.util.find_spec("openseespy"),
                                         "pip install openseespy")}
_skipped = [name for name, (there, _) in NEEDS.items() if not there()]
for _name in _skipped:
    print(f"uqkit docs: not running {_name} (it needs what is not installed: "
          f"{NEEDS[_name][1]})")

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_" if not _skipped else
    r"/plot_(?!" + "|".join(n[5:-3] for n in _skipped) + r")",
    "reset_argv": "gallery_args.gallery_argv",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "matplotlib_animations": False,
    "min_reported_time": 1,
}

# --- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"uqkit {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": [], "changelog": []}
autosummary_generate = False  # the API pages are written by _ext/api_pages.py
