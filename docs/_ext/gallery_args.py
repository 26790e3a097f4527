"""The command-line arguments each gallery example runs with during the docs build."""
import pathlib

#: The sizes each example runs at during the build (seconds each on 2 cores); a user running a
#: script gets its own defaults, which its ``--help`` states.
GALLERY_ARGS = {
    "plot_fe_convergence.py": ["--levels", "3"],
    "plot_own_model_correlated.py": ["--n", "4096"],
    "plot_surrogate_comparison.py": ["--n-train", "64", "--n-test", "500"],
    "plot_surrogate_monte_carlo.py": ["--n-train", "128", "--n-mc", "20000", "--n-truth", "2000"],
    "plot_sobol_indices.py": ["--n", "256", "--n-train", "128"],
    "plot_active_learning.py": ["--candidates", "20000"],
    "plot_calculix_cantilever.py": ["--n", "200", "--sobol-n", "64"],
    "plot_calibration.py": ["--n-samples", "500"],
    "plot_surrogate_save_reuse.py": ["--n-train", "64", "--n-mc", "20000"],
}


def gallery_argv(script_path, gallery_conf):
    """sphinx-gallery's ``reset_argv``: the arguments of ``script_path`` during the build."""
    return GALLERY_ARGS.get(pathlib.Path(script_path).name, [])
