"""numba's cache of fem's kernels follows fem's sources (:mod:`fem.numba_cache`)."""
import os
import shutil
import subprocess
import sys

import fem
from fem import numba_cache

ENERGY = """
import numpy as np
from fem import Membrane
from fem.assembly import assemble
s = Membrane(nx=2, ny=2).system("ritz")
U = np.zeros(3 * len(s["phi"]))
U[2::3] = s["phi"]
f, ab = np.zeros(len(s["free_dofs"])), np.zeros((len(s["free_dofs"]), s["bandwidth"] + 1))
print(repr(assemble(U, s["conn"], s["elem_eq"], s["dndx"], s["dndy"], s["weight"], s["ktab"],
                    s["c11"], s["c12"], s["c33"], f, ab, True)))
"""


def _energy(root, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(root))
    return float(subprocess.run([sys.executable, "-c", ENERGY], capture_output=True, text=True,
                                env=env, check=True, cwd=root).stdout)


def test_a_changed_kernel_is_compiled_again_not_taken_from_the_cache(tmp_path):
    """assemble (fem/assembly.py) calls the element kernel of fem/element.py. numba keys its
    cache by assembly.py alone, so after element.py changed the cached assemble ran the old
    kernel: the energy below stayed as it was, where doubling the kernel's doubles it."""
    root = tmp_path / "src"
    shutil.copytree(os.path.dirname(fem.__file__), root / "fem",
                    ignore=shutil.ignore_patterns("__pycache__"))
    first = _energy(root, tmp_path / "cache")
    kernel = root / "fem" / "element.py"
    text = kernel.read_text()
    assert text.count("energy += 0.5 * w *") == 1
    kernel.write_text(text.replace("energy += 0.5 * w *", "energy += 1.0 * w *"))
    assert _energy(root, tmp_path / "cache") == 2 * first


def test_refresh_empties_the_index_only_when_the_sources_change(tmp_path):
    from fem import assembly, banded, element, newton

    modules = (element, banded, assembly, newton)
    folders = {cache._cache_path for _, cache in numba_cache.cached_functions(modules)}
    assert len(numba_cache.cached_functions((element,))) == 1  # the kernel, not its helpers
    # one stamp per interpreter, as numba keeps one index per interpreter: a shared stamp let
    # a second Python (another version or build) on the same folder run the stale kernel
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    assert numba_cache.STAMP == f"fem-sources.{tag}.sha256"
    assert numba_cache.refresh(modules, os.path.dirname(fem.__file__)) == 0  # stamped at import
    stamp = [os.path.join(f, numba_cache.STAMP) for f in folders]
    src = tmp_path / "fem"
    shutil.copytree(os.path.dirname(fem.__file__), src,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (src / "element.py").write_text((src / "element.py").read_text() + "\n# changed\n")
    before = [open(p).read() for p in stamp]
    try:
        emptied = numba_cache.refresh(modules, str(src))
        assert emptied == len(numba_cache.cached_functions(modules)) > 5
        assert numba_cache.refresh(modules, str(src)) == 0
    finally:  # this process's kernels are compiled already; stamp the real sources again
        for p, text in zip(stamp, before):
            with open(p, "w") as f:
                f.write(text)
