"""Write the synthetic TPU-format dataset shipped with uqkit.

The TPU high-rise database needs a registration and cannot be downloaded here, so the wind study
ships a synthetic stand-in in exactly the database's .mat layout:

* a 1:1:5 building (breadth = depth = 0.1 m, height = 0.5 m: the paper's 40 x 40 x 200 m at
  1:400) at 0 degrees, 504 taps (7 across x 18 up on each face, clustered toward the edges);
* pressure-coefficient time series at 1000 Hz whose statistics follow the familiar patterns:
  windward stagnation (Cp_mean up to ~0.85 at about 0.8 H, falling toward the edges and the
  roof), side-face suction strongest behind the leading edge (~-0.95) and recovering
  downstream, a nearly uniform leeward suction (~-0.5); Cp_rms highest behind the side faces'
  leading edges (~0.4) and at the windward edges, lowest on the leeward face;
* each tap's series is an AR(1) process rescaled so its sample mean and standard deviation
  equal the target Cp_mean and Cp_rms exactly, so 256 steps suffice and the file stays small.

Run ``python studies/data/make_synthetic_tpu.py`` to rewrite
``studies/data/tpu_synthetic_1to1to5_0deg.mat`` (deterministic, seed 0).
"""
import os

import numpy as np
from scipy.io import savemat

__all__ = ["B", "D", "H", "N_STEPS", "FREQ", "X_FRAC", "Z_FRAC", "cp_fields", "build", "PATH"]

B = D = 0.1
H = 0.5
N_STEPS = 256
FREQ = 1000.0
X_FRAC = np.array([0.04, 0.15, 0.32, 0.5, 0.68, 0.85, 0.96])
Z_FRAC = np.concatenate([np.linspace(0.03, 0.85, 14), [0.9, 0.94, 0.97, 0.99]])


def cp_fields(face, s, z):
    """Target Cp_mean and Cp_rms on a face at (s, z): s in [0, 1] across the face from its
    left edge, z in [0, 1] up the height."""
    if face == 1:  # windward: stagnation around 0.8 H, lower at the edges and near the roof
        mean = 0.85 * z ** 0.25 * (1 - 0.55 * (2 * s - 1) ** 4) * (1 - 0.45 * np.clip(
            (z - 0.85) / 0.15, 0, 1) ** 2)
        rms = 0.17 + 0.08 * (2 * s - 1) ** 2 + 0.03 * z
    elif face in (2, 4):  # sides: the leading edge is at s = 0 on face 2, s = 1 on face 4
        lead = s if face == 2 else 1 - s
        mean = -0.5 - 0.45 * np.exp(-4.0 * lead) - 0.1 * np.clip((z - 0.9) / 0.1, 0, 1)
        rms = 0.16 + 0.24 * np.exp(-5.0 * lead) + 0.03 * z
    else:  # leeward
        mean = -0.48 - 0.06 * z + 0.04 * (2 * s - 1) ** 2
        rms = 0.12 + 0.04 * (2 * s - 1) ** 2 + 0.02 * z
    return mean, rms


def build(seed=0):
    rng = np.random.default_rng(seed)
    offsets = {1: 0.0, 2: B, 3: B + D, 4: 2 * B + D}
    widths = {1: B, 2: D, 3: B, 4: D}
    rows, series = [], []
    tap = 0
    for face in (1, 2, 3, 4):
        for zf in Z_FRAC:
            for sf in X_FRAC:
                tap += 1
                mean, rms = cp_fields(face, sf, zf)
                e = rng.standard_normal(N_STEPS)
                a = np.empty(N_STEPS)
                a[0] = e[0]
                for k in range(1, N_STEPS):
                    a[k] = 0.7 * a[k - 1] + e[k]
                a = (a - a.mean()) / a.std()
                series.append(mean + rms * a)
                rows.append((offsets[face] + sf * widths[face], zf * H, tap, face))
    loc = np.array(rows).T
    cp = np.array(series).T.astype(np.float32)
    return {"Building_height": H, "Building_breadth": B, "Building_depth": D,
            "Sample_period": N_STEPS / FREQ, "Sample_frequency": FREQ,
            "Wind_direction_angle": 0.0, "Uh_AverageWindSpeed": 11.0,
            "Location_of_measured_points": loc, "Wind_pressure_coefficients": cp}


PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tpu_synthetic_1to1to5_0deg.mat")

if __name__ == "__main__":
    savemat(PATH, build(), do_compression=True)
    print(f"wrote {PATH} ({os.path.getsize(PATH) / 1e3:.0f} kB)")
