"""The user guide's code runs: every fenced ```python block of a page in ``docs/guide/``
runs, in order, in one namespace per page, in a fresh directory. A block that is shown but
not meant to run (a cluster address, a long study) is written as a ``{code-block} python``
directive instead, which this test leaves alone. A page whose blocks call a program that is
not installed (CalculiX's ``ccx``) is skipped with the install command."""
import os
import pathlib
import re
import shutil

import pytest

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PROGRAMS = {"ccx": "apt-get install calculix-ccx"}


def _pages():
    return sorted(p.name for p in GUIDE.glob("*.md") if BLOCK.search(p.read_text()))


def test_the_guide_has_runnable_pages():
    assert len(_pages()) >= 8


@pytest.mark.parametrize("page", _pages())
def test_guide_page_code_runs(page, tmp_path, monkeypatch):
    blocks = BLOCK.findall((GUIDE / page).read_text())
    for program, install in PROGRAMS.items():
        if any(re.search(rf"\b{program}\b", b) for b in blocks) and not shutil.which(program):
            pytest.skip(f"{page} runs {program}: {install}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__main__"}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"{page}, block {k + 1}", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - the page and block name the failure
            raise AssertionError(f"{page}, block {k + 1} failed: {exc!r}\n{code}") from exc
    import matplotlib.pyplot as plt

    plt.close("all")
    assert os.getcwd() == str(tmp_path)
