"""A recorded wave elevation as a deterministic sea: its Fourier components reproduce the record at the origin
(every sample, 1e-12 of its size: an FFT and its inverse), a run's incident wave at the hull's origin is the
record band-limited to [omega_min, omega_max] (1e-9), and a file that cannot be such a sea (uneven times, a
run longer than the record) is one line."""

import json
from pathlib import Path

import numpy as np
import pytest

import jaxmbd
from jaxmbd.hydro.waves import RecordedWave
from jaxmbd.io.system_file import SystemFileError
from jaxmbd.run import run, settings_of, start_of

DATA = Path(jaxmbd.__file__).parent / "data" / "barge_hydro.nc"
N, DT = 400, 0.25  # a 100 s record


def _record():
    rng = np.random.default_rng(3)
    t = DT * np.arange(N)
    eta = sum(a * np.cos(w * t + p) for a, w, p in zip(rng.uniform(0.1, 0.5, 12), rng.uniform(0.3, 3.0, 12), rng.uniform(0, 6.3, 12)))
    return t, eta - eta.mean()


def test_the_components_are_the_record():
    t, eta = _record()
    c = RecordedWave(DT, eta).components()
    z = np.sum(np.asarray(c.amplitude) * np.cos(np.outer(t, np.asarray(c.omega)) + np.asarray(c.phase)), axis=1)
    np.testing.assert_allclose(z, eta, rtol=0, atol=1e-12 * np.max(np.abs(eta)))


def test_a_run_meets_the_record_at_the_hull(tmp_path):
    t, eta = _record()
    csv = tmp_path / "eta.csv"
    csv.write_text("time_s,elevation_m\n" + "\n".join(f"{a:.17g},{b:.17g}" for a, b in zip(t, eta)))
    text = f"""
name = "recorded_sea"
[[bodies]]
name = "barge"
joint = "prismatic"
axis = [0, 0, 1]
mass = 380.0e3
com = [0.0, 0.0, -0.5]
radii_of_gyration = [3.5, 5.8, 5.8]
[[hydro]]
name = "hull"
file = "{DATA.as_posix()}"
bodies = ["barge"]
[waves]
type = "recorded"
file = "{csv.as_posix()}"
omega_max = 2.0
[simulation]
duration = 50.0
method = "rk4"
dt = 0.05
save_dt = 0.25
"""
    path = tmp_path / "sea.toml"
    path.write_text(text)
    loaded = jaxmbd.load_system(path)
    res = run(loaded, start_of(loaded), settings=settings_of(loaded)).realisation(0)
    spectrum = np.fft.rfft(eta)
    spectrum[2 * np.pi * np.arange(spectrum.size) / (N * DT) > 2.0] = 0.0
    banded = np.fft.irfft(spectrum, N)
    np.testing.assert_allclose(res.outputs["hull/wave_elevation"], banded[: res.time.size], rtol=0, atol=1e-9)
    sea = json.loads(res.to_dataset().attrs["sea_state"])
    assert sea["recorded"]["samples"] == N and sea["recorded"]["dt_s"] == pytest.approx(DT)
    path.write_text(text.replace("duration = 50.0", "duration = 150.0"))
    with pytest.raises(SystemFileError, match=r"simulation.duration: 150 s is longer than the recorded wave \(100 s\)"):
        jaxmbd.load_system(path)
    from jaxmbd.run import RunError

    with pytest.raises(RunError, match=r"a run of up to 120 s .* is longer than the recorded wave \(100 s\)"):
        run(loaded, start_of(loaded), settings=settings_of(loaded, duration=120.0))
    path.write_text(text.replace("omega_max = 2.0", "omega_max = 0.05"))  # the record's lowest frequency is 0.063 rad/s
    with pytest.raises(SystemFileError, match=r"waves: .*none lies in \[omega_min, omega_max\]"):
        jaxmbd.load_system(path)
    csv.write_text("\n".join(f"{a + (0.01 if k == 5 else 0.0)},{b}" for k, (a, b) in enumerate(zip(t, eta))))
    path.write_text(text)
    with pytest.raises(SystemFileError, match=r"waves.file: .* evenly spaced"):
        jaxmbd.load_system(path)
