"""Keep freed memory for reuse: glibc's malloc thresholds for torch's CPU tensors.

A training or prediction step allocates each of its intermediate tensors anew and frees it at
the end of the step. glibc's ``malloc`` serves a block above its *mmap threshold* (128 KiB at
start, raised to the largest mapped block freed so far) with a fresh ``mmap``, which ``free``
unmaps at once, and gives freed memory at the top of the heap back to the system once it
exceeds its *trim threshold* (twice the mmap threshold). Either way the next step's equal
allocation faults its pages in again, and the kernel zero-fills each 4 KiB page first: work
the arithmetic never asked for.

Measured on the Laplace fit's MAP objective (ten 5-30-15-10-3 networks on 512 points each,
one thread, float64): 350-1050 minor page faults per evaluation with glibc's defaults (but
0 and 137 in two later runs: the raise of the mmap threshold absorbs them when the freed
blocks come in a favourable order), about 2,700 with its starting thresholds pinned, about
0-11 with the thresholds below, and 15-25% less CPU per evaluation over three interleaved runs
each. The membrane study's largest table task (ten such fits, their posteriors and scores):
2.37 million minor faults against 77 thousand, 31.2 s of CPU against 28.0 s.

:func:`keep_freed_memory` sets the mmap threshold to glibc's largest (32 MiB on 64-bit
systems; larger blocks are still mapped and unmapped) and the trim threshold to 256 MiB, so
a process keeps up to 256 MiB of freed heap for its next allocations. glibc has one setting
per process, so a library must not change it behind its user's back: it is **opt-in**.
``UQKIT_MALLOC=keep`` in the environment asks for it, and every BDL fit or prediction then
applies it once per process (:func:`apply_from_environment`; pool workers inherit the
variable). The ``uqkit`` command sets ``UQKIT_MALLOC=keep`` for itself and its workers unless
the variable is set already; ``UQKIT_MALLOC=system`` leaves glibc's defaults everywhere. A
script may also call :func:`keep_freed_memory` itself. On a C library other than glibc
nothing changes.

Imports: the standard library only.

Example:
    >>> import platform
    >>> glibc = platform.libc_ver()[0] == "glibc"
    >>> keep_freed_memory() == (glibc and os.environ.get("UQKIT_MALLOC", "").lower() != "system")
    True
"""
import ctypes
import ctypes.util
import os

__all__ = ["ENVIRONMENT", "M_TRIM_THRESHOLD", "M_MMAP_THRESHOLD", "MMAP_THRESHOLD",
           "TRIM_THRESHOLD", "keep_freed_memory", "apply_from_environment"]

#: The environment variable, and its values: ``keep`` (opt in) and ``system`` (opt out).
ENVIRONMENT = "UQKIT_MALLOC"

#: glibc's ``mallopt`` parameter number of the trim threshold (malloc.h).
M_TRIM_THRESHOLD = -1
#: glibc's ``mallopt`` parameter number of the mmap threshold (malloc.h).
M_MMAP_THRESHOLD = -3
#: The mmap threshold set (bytes): glibc's largest on 64-bit.
MMAP_THRESHOLD = 32 * 1024 * 1024
#: The trim threshold set (bytes): above the mmap threshold.
TRIM_THRESHOLD = 256 * 1024 * 1024

_done = None


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds (module docstring) once per process.

    Returns:
        True if the thresholds are set (now or by an earlier call), False if they are left
        alone (``UQKIT_MALLOC=system``, or the C library is not glibc).
    """
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get(ENVIRONMENT, "").lower() == "system":
        return _done
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # glibc only: mallopt's numbers are glibc's
    except (OSError, AttributeError):
        return _done
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    _done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _done


def apply_from_environment():
    """:func:`keep_freed_memory` if ``UQKIT_MALLOC=keep`` is set, else nothing; True if the
    thresholds are set."""
    if os.environ.get(ENVIRONMENT, "").lower() == "keep":
        return keep_freed_memory()
    return bool(_done)
