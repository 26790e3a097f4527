"""A study store: one directory holding a propagation's finished chunks.

Layout (readable with numpy alone)::

    DIR/manifest.json          {"format": "uqkit-store", "version": 1, "settings": {...}}
    DIR/chunks/chunk-000012.npz

Each chunk file holds ``start`` (index of its first row), ``inputs`` (m, d), ``outputs``
(m, k), ``status`` (m,) int (0 = ok), ``reasons`` (m,) str and ``seconds`` (wall time of
its evaluation; where a resume took some rows' answers from kept ones, the time per run
made times m); load one with ``np.load(path)`` (no pickle needed). A chunk's file is named
by its index, six digits or more; other files in ``chunks/`` (a sync tool's
``chunk-000012 (copy).npz``) are not chunks, and are ignored with a warning. Chunks are written
atomically (temporary file, fsync, rename, fsync of the directory), so a killed run leaves
only whole chunks behind. The manifest records the settings (model, sample count, chunk size,
a hash of the inputs, seed, ...): reopening the directory with different settings is refused
instead of mixing results. An open store holds a lock on its directory (``DIR/.lock``, released
by the operating system if the process dies), so two runs never write one store at once.
"""
import json
import os
import re
import socket
import tempfile
import time
import warnings
import zipfile
from contextlib import contextmanager

import numpy as np

__all__ = ["FORMAT", "VERSION", "StoreMismatchError", "StoreBusyError", "StoreCorruptError",
           "directory_lock",
           "describe_differences", "FINGERPRINT_HINT", "atomic_write", "StudyStore",
           "load_dataset"]

#: The manifest's ``format``: what the directory holds.
FORMAT = "uqkit-store"
#: The manifest's ``version``. 2: the manifest no longer pins n (a store may hold a shorter
#: or longer sample), and records metadata; chunks record their evaluation time.
VERSION = 2


class StoreMismatchError(ValueError):
    """The directory holds a study with other settings."""


class StoreBusyError(ValueError):
    """Another process is using the directory."""


class StoreCorruptError(ValueError):
    """A file of the store cannot be read (chunks are written atomically, so this is damage
    from outside: a full disk at copy time, a hand edit)."""


def _read_manifest(path):
    """The manifest's JSON, or a :class:`StoreCorruptError` naming the file."""
    try:
        with open(path) as fh:
            return json.load(fh)
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreCorruptError(f"{path} is not readable JSON ({exc}): the store's manifest is "
                                "damaged; restore it or use a new directory") from None


def _read_chunk(path):
    """A chunk's arrays as a dict, or a :class:`StoreCorruptError` naming the file."""
    try:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise StoreCorruptError(f"{path} is unreadable ({type(exc).__name__}: {exc}): delete "
                                "it, and a rerun computes its runs again") from None


def _chunk_files(chunk_dir):
    """``{index: file name}`` of the chunks in ``chunk_dir``: the names
    :meth:`StudyStore.chunk_path` gives, and no other. A file named like one but not one
    (``chunk-000001 (copy).npz``, a sync tool's copy of a chunk) is left alone, with a
    warning: read as a chunk, it duplicated rows, or stopped a resume."""
    out = {}
    for name in os.listdir(chunk_dir):
        match = re.fullmatch(r"chunk-(\d{6,})\.npz", name)
        if match and name == f"chunk-{int(match[1]):06d}.npz":
            out[int(match[1])] = name
        elif name.startswith("chunk-") and name.endswith(".npz"):
            warnings.warn(f"uqkit: {os.path.join(chunk_dir, name)!r} is not a chunk of the "
                          "store (they are named chunk-NNNNNN.npz); it is ignored",
                          RuntimeWarning, stacklevel=3)
    return out


@contextmanager
def directory_lock(directory):
    """Hold an exclusive lock on ``directory`` (created if needed) for the ``with`` block.

    Raises:
        StoreBusyError: another process holds it; the message names that process.
    """
    from filelock import FileLock, Timeout

    os.makedirs(directory, exist_ok=True)
    owner = os.path.join(directory, ".lock-owner")
    lock = FileLock(os.path.join(directory, ".lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        try:
            with open(owner) as fh:
                who = fh.read().strip()
        except OSError:
            who = "another process"
        raise StoreBusyError(f"{directory!r} is in use by {who}; wait for it to finish or use "
                             "another directory") from None
    try:
        with open(owner, "w") as fh:
            fh.write(f"process {os.getpid()} on {socket.gethostname()} since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}")
        yield
    finally:
        lock.release()


def _canonical(settings):
    from .identity import json_default

    return json.loads(json.dumps(settings, sort_keys=True, default=json_default))


def describe_differences(old, new, prefix="", width=100):
    """``"key: stored OLD, now NEW; ..."`` for every key whose value differs between two
    settings dicts (sorted by key; a missing key reads None), down to the entries that
    differ inside nested dicts (``model.templates: ...``); a value longer than ``width``
    characters is cut short.

    >>> describe_differences({"model": {"name": "m", "mesh": [20, 10]}, "n": 5},
    ...                      {"model": {"name": "m", "mesh": [40, 20]}, "n": 5})
    'model.mesh: stored [20, 10], now [40, 20]'
    """
    def show(value):
        text = repr(value)
        return text if len(text) <= width else text[:width - 3] + "..."

    parts = []
    for k in sorted(set(old) | set(new), key=str):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            parts.append(describe_differences(a, b, f"{prefix}{k}.", width))
        else:
            parts.append(f"{prefix}{k}: stored {show(a)}, now {show(b)}")
    return "; ".join(parts)


#: What a changed model fingerprint means, added to the refusal that shows one.
FINGERPRINT_HINT = (
    "the model's fingerprint covers its code, the values it holds and imports, and the "
    "source of the module that defines it: a model defined in a script changes with any "
    "edit of that script, so put the model in a module of its own (or give it a describe() "
    "method) to keep its store while the script changes")


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path, write):
    """Write a file atomically: ``write(fileobj)`` into a temporary file beside ``path``,
    fsync it, rename it over ``path`` and fsync the directory."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a file gets the user's umask
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


class StudyStore:
    """Open (or create) the store in ``directory`` for ``settings`` (JSON-friendly dict),
    locking the directory until :meth:`close` (or the end of a ``with`` block). ``metadata``
    (names, the input distributions) is recorded with a new store but not compared.

    Raises:
        StoreMismatchError: the directory holds a store made with other settings.
        StoreBusyError: another process has the store open.
    """

    def __init__(self, directory, settings, metadata=None):
        self.directory = os.fspath(directory)
        if not self.directory:
            raise StoreMismatchError("a store needs a directory; got an empty path")
        # fixed now: a model run in this process may change the working directory (os.chdir
        # in a user's function sent every later chunk into a folder of its own)
        self.directory = os.path.abspath(self.directory)
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise StoreMismatchError(f"the store {self.directory!r} is a file, not a directory: "
                                     "give a new or a store's directory")
        self.settings = _canonical(settings)
        self.metadata = _canonical(metadata or {})
        self.chunk_dir = os.path.join(self.directory, "chunks")
        self._lock = directory_lock(self.directory)
        self._lock.__enter__()
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def stored_settings(directory):
        """The settings of the store in ``directory``, or None if there is none."""
        manifest = os.path.join(os.fspath(directory), "manifest.json")
        if not os.path.exists(manifest):
            return None
        body = _read_manifest(manifest)
        if not isinstance(body, dict) or body.get("format") != FORMAT or \
                body.get("version") != VERSION:
            return None  # opening the store says what is wrong with it
        return body.get("settings")

    def close(self):
        """Release the directory's lock."""
        if self._lock is not None:
            self._lock.__exit__(None, None, None)
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _open(self):
        manifest = os.path.join(self.directory, "manifest.json")
        self.stored_metadata = self.metadata
        if os.path.exists(manifest):
            old = _read_manifest(manifest)
            if not isinstance(old, dict) or old.get("format") != FORMAT:
                raise StoreMismatchError(f"{manifest} is not a uqkit store")
            self.stored_metadata = old.get("metadata") or {}
            if old.get("version") != VERSION:
                raise StoreMismatchError(
                    f"{self.directory!r} holds a store of format {old.get('version')} from an "
                    f"older uqkit (this one writes format {VERSION}); use a new directory")
            if old["settings"] != self.settings:
                details = describe_differences(old["settings"], self.settings)
                hint = f" ({FINGERPRINT_HINT})" if "fingerprint: stored" in details else ""
                raise StoreMismatchError(
                    f"the study directory {self.directory!r} holds results made with other "
                    f"settings ({details}); use a new directory or the same settings{hint}")
        else:
            os.makedirs(self.directory, exist_ok=True)
            body = json.dumps({"format": FORMAT, "version": VERSION, "settings": self.settings,
                               "metadata": self.metadata}, indent=1, sort_keys=True).encode()
            atomic_write(manifest, lambda fh: fh.write(body))
        os.makedirs(self.chunk_dir, exist_ok=True)

    def chunk_path(self, index):
        """The file of chunk ``index`` (``chunks/chunk-NNNNNN.npz``)."""
        return os.path.join(self.chunk_dir, f"chunk-{index:06d}.npz")

    def finished(self):
        """Indices of the chunks on disk."""
        return sorted(_chunk_files(self.chunk_dir))

    def load(self, index):
        """The arrays of one finished chunk as a dict, or None if it is not on disk."""
        path = self.chunk_path(index)
        if not os.path.exists(path):
            return None
        return _read_chunk(path)

    def save(self, index, start, inputs, outputs, status, reasons, seconds=0.0):
        """Write one finished chunk atomically (``seconds``: wall time of its evaluation)."""
        arrays = dict(start=np.int64(start), inputs=np.asarray(inputs, float),
                      outputs=np.asarray(outputs, float), status=np.asarray(status, np.int64),
                      reasons=np.asarray(reasons, dtype=str), seconds=np.float64(seconds))
        atomic_write(self.chunk_path(index), lambda fh: np.savez(fh, **arrays))


def load_dataset(directory):
    """Concatenate every chunk of a store: a dict of ``inputs``, ``outputs``, ``status``,
    ``reasons`` and ``rows`` (the global row index of each entry), in row order, with the
    ``input_names`` and ``output_names`` the manifest records (empty if it has none).

    Raises:
        ValueError: chunks with successful rows disagree on the number of outputs.
    """
    metadata = _read_manifest(os.path.join(os.fspath(directory), "manifest.json")).get(
        "metadata", {})
    names = {"input_names": tuple(metadata.get("input_names", ())),
             "output_names": tuple(metadata.get("output_names", ()))}
    chunk_dir = os.path.join(os.fspath(directory), "chunks")
    parts = [_read_chunk(os.path.join(chunk_dir, name))
             for _, name in sorted(_chunk_files(chunk_dir).items())]
    if not parts:
        return {"inputs": np.empty((0, 0)), "outputs": np.empty((0, 0)),
                "status": np.empty(0, np.int64), "reasons": np.empty(0, str),
                "rows": np.empty(0, np.int64), **names}
    from .model import stack_values

    parts.sort(key=lambda p: int(p["start"]))
    return {"inputs": np.concatenate([p["inputs"] for p in parts]),
            "outputs": stack_values([p["outputs"] for p in parts], [p["status"] for p in parts],
                                    width=len(names["output_names"]) or None),
            "status": np.concatenate([p["status"] for p in parts]),
            "reasons": np.concatenate([p["reasons"] for p in parts]),
            "rows": np.concatenate([int(p["start"]) + np.arange(len(p["status"]))
                                    for p in parts]), **names}
