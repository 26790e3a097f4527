"""The command-line arguments each gallery example runs with during the docs build."""
import pathlib
import tempfile

#: The sizes each example runs at during the build (seconds each on 2 cores); a user running a
#: script gets its own defaults, which its ``--help`` states. The tests run the same scripts
#: at smaller sizes still (``TINY`` in tests/examples/test_examples.py): they check that each
#: runs and prints its answer, where the build's sizes must give figures worth looking at.
GALLERY_ARGS = {
    "plot_fe_convergence.py": ["--levels", "3"],
    "plot_own_model_correlated.py": ["--n", "4096"],
    "plot_surrogate_comparison.py": ["--n-train", "64", "--n-test", "500"],
    "plot_surrogate_monte_carlo.py": ["--n-train", "128", "--n-mc", "20000", "--n-truth", "2000"],
    "plot_sobol_indices.py": ["--n", "256", "--n-train", "128"],
    "plot_active_learning.py": ["--candidates", "10000"],
    "plot_calculix_cantilever.py": ["--n", "200", "--sobol-n", "64"],
    "plot_opensees_cantilever.py": ["--n", "1000", "--sobol-n", "256"],
    "plot_calibration.py": ["--n-samples", "500"],
    "plot_surrogate_save_reuse.py": ["--n-train", "64", "--n-mc", "20000"],
}


#: Examples that write files: during the build they write to a new temporary directory, so
#: that every build computes afresh and nothing lands in the source tree.
WRITES = {"plot_calculix_cantilever.py": "calculix", "plot_opensees_cantilever.py": "opensees",
          "plot_calibration.py": "calibration",
          "plot_surrogate_save_reuse.py": "bdl.pt"}


def gallery_argv(gallery_conf, script_vars):
    """sphinx-gallery's ``reset_argv``: the arguments of the script during the build."""
    name = pathlib.Path(script_vars["src_file"]).name
    args = list(GALLERY_ARGS.get(name, []))
    if name in WRITES:
        args += ["--out", str(pathlib.Path(tempfile.mkdtemp(prefix="uqkit-gallery-"))
                              / WRITES[name])]
    return args
