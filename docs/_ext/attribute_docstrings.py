"""Sphinx extension: a constant's or a property's docstring is read as prose, not as
``type: description``.

napoleon reads the first line of a data, attribute or property docstring as Google style's
inline ``type: description``, so ``#: Edge names: bottom is y = 0, ...`` rendered as
"bottom is y = 0, ..." under a field "Type: Edge names", and a line with a colon in the middle
of a sentence lost its first half to the field. uqkit's docstrings of constants and
properties are sentences; where one does begin with a type (``int: ...``), it is left to
napoleon. Otherwise an empty reST comment (``..``) is put before the docstring, which napoleon
takes for the line to split (it has no colon) and reST renders as nothing.

>>> protect(["Edge names: bottom is y = 0."])
['..', '', 'Edge names: bottom is y = 0.']
>>> protect(["int: how many."]), protect(["numpy.ndarray | None: the scale."])[0]
(['int: how many.'], 'numpy.ndarray | None: the scale.')
>>> protect(["2: the manifest no longer pins n."])[0]
'..'
>>> protect(["Seconds :func:`wait` waits: at most 5."])[0]
'..'
>>> protect(["No colon here."])
['No colon here.']
"""
import re

#: A type's name: dotted (not a number), optionally subscripted.
NAME = r"[A-Za-z_][\w.]*(\[[^\]]*\])?"
#: A first line napoleon should read as ``type: description``: names joined by ``|``, ``or``
#: or commas, then a colon and a space (not a role's colon: ``Seconds :func:`x` ...``).
TYPE_FIRST = re.compile(rf"\s*{NAME}(\s*(\||,|\bor\b)\s*{NAME})*:(?=\s|$)")
#: The docstrings napoleon reads as an inline attribute.
KINDS = ("data", "attribute", "property")


def protect(lines):
    """``lines`` (a docstring, one line each) as napoleon should see them: with the empty
    comment before them where the first non-empty line has a colon and begins with no type."""
    first = next((line for line in lines if line.strip()), "")
    if ":" not in first or TYPE_FIRST.match(first):
        return list(lines)
    return ["..", "", *lines]


def read_as_prose(app, what, name, obj, options, lines):
    """``autodoc-process-docstring``, before napoleon's (priority 500)."""
    if what in KINDS:
        lines[:] = protect(lines)


def setup(app):
    app.connect("autodoc-process-docstring", read_as_prose, priority=400)
    return {"parallel_read_safe": True, "version": "1"}
