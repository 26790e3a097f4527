"""Shared by the studies' tests."""
import subprocess
import sys

import pytest

PROBE = """
import sys
import studies.common
seen = {{}}
def warm(study, preload=()):
    seen.update({record})
    raise SystemExit(0)
studies.common.warm_fe_pool = warm
sys.argv = ["uqkit", "study"] + {argv!r}
from uqkit.cli.app import command
try:
    command()
finally:
    print(seen)
"""


@pytest.fixture
def warm_up_seen():
    """``seen(argv, record)``: run ``uqkit study ARGV`` in a fresh interpreter until it asks
    for its FE pool (studies.common.warm_fe_pool, replaced there by a recorder), and return
    the dict that ``record`` (a Python expression of ``study`` and ``sys``) made then, as
    printed. ``argv`` should keep the study small: if the pool is never asked for, the
    study runs whole."""

    def seen(argv, record):
        code = PROBE.format(argv=list(argv), record=record)
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, timeout=300).stdout.strip()

    return seen
