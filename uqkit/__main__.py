"""``python -m uqkit``: the ``uqkit`` command, as ``python -m uqkit.cli``."""
from .cli.app import command

command()
