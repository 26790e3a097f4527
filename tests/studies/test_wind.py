"""TPU loader on the shipped synthetic dataset, malformed files, and a small wind study."""
import json
import os

import numpy as np
import pytest
from scipy.io import savemat

from studies.data.make_synthetic_tpu import build, cp_fields
from studies.tpu import REQUIRED, load_tpu
from studies.wind import SYNTHETIC, WindStudy, reference_fields, run


def test_loader_on_the_shipped_dataset():
    data = load_tpu(SYNTHETIC)
    assert data.n_taps == 504 and (data.height, data.breadth, data.depth) == (0.5, 0.1, 0.1)
    assert set(data.faces) == {"windward", "rightside", "leeward", "leftside"}
    for face in data.faces.values():
        assert face.x.min() >= 0 and face.x.max() <= face.width + 1e-12
        assert face.z.min() >= 0 and face.z.max() <= data.height
        # the time series reproduce the generator's targets exactly
        s = face.x / face.width
        zf = face.z / data.height
        mean, rms = cp_fields(face.number, s, zf)
        np.testing.assert_allclose(face.cp_mean, mean, atol=1e-5)
        np.testing.assert_allclose(face.cp_rms, rms, atol=1e-5)
    w, l = data.faces["windward"], data.faces["leeward"]
    assert w.cp_mean.max() > 0.7 and l.cp_mean.max() < -0.4  # stagnation and suction
    side = data.faces["rightside"]
    assert side.cp_rms[side.x < 0.01].mean() > side.cp_rms[side.x > 0.09].mean()  # edge peak


def test_the_shipped_file_is_what_the_generator_writes(tmp_path):
    path = tmp_path / "again.mat"
    savemat(path, build(), do_compression=True)
    a, b = load_tpu(path), load_tpu(SYNTHETIC)
    for name in a.faces:
        np.testing.assert_array_equal(a.faces[name].cp_mean, b.faces[name].cp_mean)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("Wind_pressure_coefficients"), "missing variables"),
    (lambda d: d.update(Location_of_measured_points=np.zeros((3, 504))), "must be 4 x ntaps"),
    (lambda d: d.update(Wind_pressure_coefficients=np.zeros((10, 7))), "nsteps x 504"),
    (lambda d: d.update(Building_height=-1.0), "Building_height must be > 0"),
])
def test_malformed_files(tmp_path, mutate, message):
    d = build()
    mutate(d)
    path = tmp_path / "bad.mat"
    savemat(path, d)
    with pytest.raises(ValueError, match=message):
        load_tpu(path)


def test_not_a_mat_file(tmp_path):
    path = tmp_path / "x.mat"
    path.write_text("hello")
    with pytest.raises(ValueError, match="not a readable .mat file"):
        load_tpu(path)
    assert set(REQUIRED) >= {"Wind_pressure_coefficients"}


def test_thin_plate_fields_pass_through_the_taps():
    data = load_tpu(SYNTHETIC)
    face = data.faces["windward"]
    from scipy.interpolate import RBFInterpolator

    rbf = RBFInterpolator(np.column_stack([face.x, face.z]), face.cp_mean,
                          kernel="thin_plate_spline")
    np.testing.assert_allclose(rbf(np.column_stack([face.x, face.z])), face.cp_mean, atol=1e-8)
    X, Z, f = reference_fields(data, (20, 60))["windward"]
    assert f["mean"].shape == (60, 20) and X.shape == (60, 20)


def test_reference_fields_reproduce_the_generators_fields_between_the_taps():
    """The project's reference fields against the synthetic database's own analytic fields
    (:func:`cp_fields`, which the taps' time series reproduce), on the grid points between
    the outermost taps (beyond them the spline extrapolates: 0.09 off at the windward base).
    A wrong axis, face or target would be off by the fields' own spread; the interpolation
    is 3-6% of it (measured)."""
    data = load_tpu(SYNTHETIC)
    fields = reference_fields(data, (20, 60))
    for name, face in data.faces.items():
        X, Z, f = fields[name]
        inside = ((X >= face.x.min()) & (X <= face.x.max()) & (Z >= face.z.min())
                  & (Z <= face.z.max()))
        truth = cp_fields(face.number, X / face.width, Z / data.height)
        for k, target in enumerate(("mean", "rms")):
            err = np.sqrt(np.mean((f[target] - truth[k])[inside] ** 2))
            assert err < 0.1 * truth[k][inside].std(), (name, target, err)


def test_small_wind_study(tmp_path):
    study = WindStudy(out=str(tmp_path), sizes=(40, 120), seeds=1, grid=(40, 120), epochs=150,
                      workers=2, progress=False)
    report = run(study, log=lambda *_: None)
    data = json.load(open(tmp_path / "report.json"))
    assert set(data["rmse"]) == {"mean", "rms"}
    for target in ("mean", "rms"):
        assert set(data["rmse"][target]) == {"windward", "rightside", "leeward", "leftside"}
        for face, by_n in data["rmse"][target].items():
            assert set(by_n) == {"40", "120"}
            assert all(0 < v < 0.2 for v in by_n.values())
    # more points, better fields on the face with the most structure
    assert data["rmse"]["mean"]["windward"]["120"] < data["rmse"]["mean"]["windward"]["40"]
    for name in ("fig9_10_cp_mean.png", "fig9_10_cp_rms.png", "fig11_posterior_trace.png"):
        assert os.path.getsize(tmp_path / name) > 10_000
    assert report["data"]["taps"] == 504


def test_a_tpu_path_that_is_a_directory_or_missing_is_named(tmp_path):
    """A directory given as --tpu was reported as 'no such file'."""
    with pytest.raises(ValueError, match=r"--tpu: .* is a directory, not a TPU .mat file"):
        WindStudy(out=str(tmp_path / "out"), tpu=str(tmp_path))
    with pytest.raises(ValueError, match=r"--tpu: no such file: .*nope.mat"):
        WindStudy(out=str(tmp_path / "out"), tpu=str(tmp_path / "nope.mat"))
