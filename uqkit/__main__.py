"""``python -m uqkit``: the ``uqkit`` command, as ``python -m uqkit.cli``."""
from .cli.app import command

if __name__ == "__main__":  # not on import (a doctest collector, say)
    command()
