"""``python -m uqkit.cli``: the ``uqkit`` command."""
from .app import command

command()
