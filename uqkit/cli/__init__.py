"""The ``uqkit`` command line: the parser and its error handling (:mod:`uqkit.cli.app`) and
the ``fe`` subcommand (:mod:`uqkit.cli.fe`). Every subcommand, ``fe`` included, is registered
through the ``uqkit.commands`` entry point group; ``run`` comes from :mod:`uqkit.external` and
``study`` from the ``studies`` package.
"""
from .app import (COMMANDS, Parser, UsageError, build_parser, check_output_dir, command, main,
                  one_line_warnings)

__all__ = ["COMMANDS", "Parser", "UsageError", "build_parser", "check_output_dir", "command",
           "main", "one_line_warnings"]
