"""Loader for the TPU high-rise aerodynamic database's .mat files.

Variables read: Building_height, Building_breadth, Building_depth, Sample_period,
Sample_frequency, Wind_direction_angle, Uh_AverageWindSpeed, Location_of_measured_points
(4 x ntaps: x along the unrolled perimeter, height, tap number, face 1-4) and
Wind_pressure_coefficients (nsteps x ntaps).

Faces are numbered 1-4 around the building; along the unrolled perimeter face 2 starts at
the breadth, face 3 at breadth + depth and face 4 at 2 x breadth + depth. Each face gets its
own coordinates: ``x`` from the face's left edge (length units of the file, model scale) and
``z`` the height. ``Cp_mean`` is the time average of each tap's pressure coefficient and
``Cp_rms`` the root mean square of its fluctuation (its standard deviation), as in the
database's own statistics.
"""
from dataclasses import dataclass

import numpy as np

__all__ = ["REQUIRED", "FACE_NAMES", "Face", "TPUData", "load_tpu"]

#: The variables a TPU database file must hold (the module notes say what each is).
REQUIRED = ("Building_height", "Building_breadth", "Building_depth", "Sample_period",
            "Sample_frequency", "Wind_direction_angle", "Uh_AverageWindSpeed",
            "Location_of_measured_points", "Wind_pressure_coefficients")
#: Face names at 0 degrees (face 1 faces the wind).
FACE_NAMES = {1: "windward", 2: "rightside", 3: "leeward", 4: "leftside"}


@dataclass
class Face:
    """Taps of one face: coordinates (x along the face, z height), tap numbers, statistics."""

    number: int
    name: str
    width: float
    x: np.ndarray
    z: np.ndarray
    taps: np.ndarray
    cp_mean: np.ndarray
    cp_rms: np.ndarray


@dataclass
class TPUData:
    """One TPU database file, in its own units: the building's height, breadth and depth
    (model scale), the record's period and sampling frequency, the wind direction angle, the
    mean wind speed at roof height, and the taps of each face that has any (its name in
    :data:`FACE_NAMES` -> Face)."""

    height: float
    breadth: float
    depth: float
    sample_period: float
    sample_frequency: float
    wind_direction: float
    mean_speed: float
    faces: dict

    @property
    def n_taps(self):
        """The number of pressure taps over all faces."""
        return sum(len(f.taps) for f in self.faces.values())


def _scalar(data, name, path):
    try:
        value = float(np.asarray(data[name]).ravel()[0])
    except (IndexError, TypeError, ValueError):
        raise ValueError(f"{path}: {name} must be a number") from None
    return value


def load_tpu(path):
    """Read a TPU .mat file into a :class:`TPUData`; malformed files raise ValueError naming
    the problem."""
    from scipy.io import loadmat

    try:
        data = loadmat(path)
    except FileNotFoundError:
        raise ValueError(f"no such file: {path}") from None
    except Exception as exc:  # scipy raises several kinds for non-.mat content
        raise ValueError(f"{path} is not a readable .mat file: {exc}") from None
    missing = [n for n in REQUIRED if n not in data]
    if missing:
        raise ValueError(f"{path}: missing variables {missing}")
    H, B, D = (_scalar(data, n, path) for n in ("Building_height", "Building_breadth",
                                                "Building_depth"))
    for name, v in (("Building_height", H), ("Building_breadth", B), ("Building_depth", D)):
        if not v > 0:
            raise ValueError(f"{path}: {name} must be > 0, got {v}")
    loc = np.asarray(data["Location_of_measured_points"], dtype=float)
    cp = np.asarray(data["Wind_pressure_coefficients"], dtype=float)
    if loc.ndim != 2 or loc.shape[0] != 4:
        raise ValueError(f"{path}: Location_of_measured_points must be 4 x ntaps, got shape "
                         f"{loc.shape}")
    ntaps = loc.shape[1]
    if cp.ndim != 2 or cp.shape[1] != ntaps:
        raise ValueError(f"{path}: Wind_pressure_coefficients must be nsteps x {ntaps} "
                         f"(one column per tap), got shape {cp.shape}")
    if cp.shape[0] < 2 or not np.isfinite(cp).all():
        raise ValueError(f"{path}: Wind_pressure_coefficients needs >= 2 finite time steps")
    face_no = loc[3].astype(int)
    if not np.isin(face_no, [1, 2, 3, 4]).all():
        raise ValueError(f"{path}: face numbers must be 1-4, got {sorted(set(face_no))}")
    offsets = {1: 0.0, 2: B, 3: B + D, 4: 2 * B + D}
    widths = {1: B, 2: D, 3: B, 4: D}
    mean, rms = cp.mean(axis=0), cp.std(axis=0)
    faces = {}
    for f in (1, 2, 3, 4):
        m = face_no == f
        if not m.any():
            continue
        faces[FACE_NAMES[f]] = Face(number=f, name=FACE_NAMES[f], width=widths[f],
                                    x=loc[0, m] - offsets[f], z=loc[1, m],
                                    taps=loc[2, m].astype(int), cp_mean=mean[m], cp_rms=rms[m])
    return TPUData(height=H, breadth=B, depth=D,
                   sample_period=_scalar(data, "Sample_period", path),
                   sample_frequency=_scalar(data, "Sample_frequency", path),
                   wind_direction=_scalar(data, "Wind_direction_angle", path),
                   mean_speed=_scalar(data, "Uh_AverageWindSpeed", path), faces=faces)
