"""External programs as uqkit models: any FE code (CalculiX, OpenSees, Abaqus, an in-house
executable, a script) run over samples through templated input files.

::

    inputs (n, d) --> ExternalModel --> per row: run dir <- DeckTemplate (Jinja2)
                          |                      program  <- process (own group, timeout)
                          |                      values   <- outputs (Regex, Table, JSONValue)
                          v
    propagate / sobol_indices / failure_probability (store, resume, pool, Dask) unchanged

:class:`ExternalModel` follows the model protocol of :mod:`uqkit.execution.model`, so every
analysis takes it as it takes a Python function. ``uqkit run CONFIG.toml``
(:mod:`uqkit.external.config`) runs a study from one file, without Python.

This package imports :mod:`uqkit.execution.model` and :mod:`uqkit.execution.executors` and is
imported by nothing in uqkit's core (the CLI finds it through an entry point).
"""
from .model import FAILED_EXIT, FAILED_OUTPUT, FAILED_TIMEOUT, KEEP, ExternalModel
from .outputs import JSONValue, Output, OutputError, Regex, Table
from .templates import DeckTemplate, TemplateError

__all__ = ["DeckTemplate", "ExternalModel", "FAILED_EXIT", "FAILED_OUTPUT", "FAILED_TIMEOUT",
           "JSONValue", "KEEP", "Output", "OutputError", "Regex", "Table", "TemplateError"]
