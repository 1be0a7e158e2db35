"""Frequency-domain RAOs: long-wave limit, constraints, PTO coupling."""

import warnings
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

import jaxmbd  # noqa: F401
from jaxmbd.hydro import bem, frequency_domain as fd

RM3 = Path(__file__).parents[2] / "shared" / "data" / "wecsim_rm3"


def _barge_mass(h):
    # Mass = displaced water, centre of mass at the reference point (0, 0, 0); box inertia of a
    # uniform 20 x 10 x 2 m block is not needed for heave.
    m = h.rho * float(h.displaced_volume[0])
    return np.diag([m, m, m, m * 10.0, m * 35.0, m * 40.0])


def test_barge_heave_rao_tends_to_one_in_long_waves():
    h = bem.read_capytaine(bem.test_barge_path())
    X = fd.rao(h, _barge_mass(h), wave_direction=np.pi)
    # Lowest frequency 0.2 rad/s (wavelength 1540 m, 77 barge lengths): |X_heave| = 1 within 2 %,
    # in phase with the wave within 2 deg.
    assert abs(abs(complex(X[0, 2])) - 1.0) < 0.02
    assert abs(np.angle(complex(X[0, 2]), deg=True)) < 2.0
    # Approaches 1 monotonically from the long-wave side over the first frequencies.
    err = np.abs(np.abs(np.asarray(X[:3, 2])) - 1.0)
    assert err[0] < err[2]


def test_constraint_matrix_reduces_the_system():
    h = bem.read_capytaine(bem.test_barge_path())
    M = _barge_mass(h)
    # P selecting heave only: equals the scalar heave equation.
    P = np.zeros((6, 1))
    P[2, 0] = 1.0
    X = np.asarray(fd.rao(h, M, constraint=P, wave_direction=0.0))
    Z = np.asarray(fd.impedance(h, M))[:, 2, 2]
    F = np.asarray(h.excitation)[:, 0, 2]
    np.testing.assert_allclose(X[:, 2], F / Z, rtol=1e-12)
    np.testing.assert_allclose(np.delete(X, 2, axis=1), 0.0, atol=0)


def test_rm3_pto_and_rigid_lock():
    if not RM3.exists():
        pytest.skip("shared/data/wecsim_rm3 not present")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = bem.read_wamit(RM3 / "rm3.out")
    V = np.asarray(h.displaced_volume) * h.rho
    M = np.diag([V[0]] * 3 + [20907301, 21306090.66, 37085481.11] + [V[1]] * 3 + [94419614.57, 94407091.24, 28542224.82])
    # Float and spar locked together in heave (one generalised coordinate, P = e3 + e9), other DOFs
    # fixed: both heave the same, and (P^T Z P) q = P^T F holds.
    P = np.zeros((12, 1))
    P[2, 0] = P[8, 0] = 1.0
    X = np.asarray(fd.rao(h, M, constraint=P))
    np.testing.assert_allclose(X[:, 2], X[:, 8], rtol=1e-12)
    Z = np.asarray(fd.impedance(h, M))
    F = np.asarray(h.excitation[:, 0, :])
    lhs = np.einsum("i,wij,j->w", P[:, 0], Z, P[:, 0]) * X[:, 2]
    np.testing.assert_allclose(lhs, F[:, 2] + F[:, 8], rtol=1e-10)
    # A very stiff PTO (1e12 N/m) between the heave DOFs gives the same as the lock, within 1e-3.
    K = np.zeros((12, 12))
    K[2, 2] = K[8, 8] = 1e12
    K[2, 8] = K[8, 2] = -1e12
    Pfree = np.zeros((12, 2))
    Pfree[2, 0] = Pfree[8, 1] = 1.0
    Xs = np.asarray(fd.rao(h, M, constraint=Pfree, stiffness_ext=K))
    band = np.asarray(h.omega) < 2.0
    np.testing.assert_allclose(Xs[band, 2], X[band, 2], rtol=1e-3, atol=1e-6)
    # The PTO damping of the WEC-Sim RM3 (1.2e6 N s/m) reduces the relative heave at resonance.
    Bp = np.zeros((12, 12))
    Bp[2, 2] = Bp[8, 8] = 1.2e6
    Bp[2, 8] = Bp[8, 2] = -1.2e6
    X0 = np.asarray(fd.rao(h, M, constraint=Pfree))
    X1 = np.asarray(fd.rao(h, M, constraint=Pfree, damping_ext=Bp))
    rel0, rel1 = np.abs(X0[:, 2] - X0[:, 8]), np.abs(X1[:, 2] - X1[:, 8])
    assert rel1[band].max() < rel0[band].max()


def test_readers_keep_the_mass_matrix_and_rao_uses_it(shared_data):
    """Capytaine's inertia_matrix and WAMIT's centre of gravity are kept; rao() without a mass takes the
    file's, and at a frequency between two table rows it lies between the rows' RAOs (the coefficients
    are interpolated); WAMIT without radii of gyration gives no mass and rao() says so."""
    import warnings

    import jaxmbd as mbd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cap = mbd.hydro.read_capytaine(shared_data / "rm3_hydrodynamics.nc", omega_max=2.0)
        wam = mbd.hydro.read_wamit(shared_data / "rm3.out")
    M = np.asarray(cap.mass_matrix)
    np.testing.assert_allclose(M[0, 0], 1000.0 * float(wam.displaced_volume[0]), rtol=1e-5)  # the same hull, ρV
    np.testing.assert_allclose(np.asarray(wam.centre_of_mass)[:, 2], [-0.72, -21.29], atol=1e-9)
    assert np.all(np.isnan(np.asarray(wam.mass_matrix)))
    with pytest.raises(ValueError, match="no mass matrix"):
        mbd.hydro.rao(wam)
    X_table = np.asarray(mbd.hydro.rao(cap))
    w = np.asarray(cap.omega)
    k = int(np.argmin(np.abs(w - 0.8)))
    mid = 0.5 * (w[k] + w[k + 1])
    X_mid = np.asarray(mbd.hydro.rao(cap, omega=mid))[0]
    lo, hi = np.minimum(abs(X_table[k]), abs(X_table[k + 1])), np.maximum(abs(X_table[k]), abs(X_table[k + 1]))
    heave = [2, 8]
    assert np.all(abs(X_mid[heave]) >= lo[heave] * 0.99) and np.all(abs(X_mid[heave]) <= hi[heave] * 1.01)
    with pytest.warns(UserWarning, match="outside the hydrodynamic table"):
        mbd.hydro.rao(cap, omega=10.0)
