"""Frequency-domain RAOs of the test barge against time-domain amplitudes (docs/barge_rao.png).

    python docs/barge_rao.py

The cached Capytaine run of a 20 x 10 x 2 m box barge feeds both: the
frequency domain through A(ω), B(ω), F̂(ω) and C; the time domain through the
HydroBody force element (A(∞) in the recursion, fitted radiation memory,
excitation, buoyancy), simulated 300 s per frequency in 5 cm waves.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd.hydro import HydroBody, WaveComponents, rao, read_capytaine, test_barge_path, wavenumber
from jaxmbd.model import Body, ModelBuilder
from jaxmbd.simulation import Integrator, initial_state, solve
from jaxmbd.system import System

HERE = Path(__file__).parent
MASS = 1025.0 * 400.0
INERTIA = np.diag([MASS * 3.5**2, MASS * 5.0**2, MASS * 5.2**2])
AMP = 0.05


def main():
    hd = read_capytaine(test_barge_path())
    b = ModelBuilder(source="barge")
    b.add_body("barge", body=Body(MASS, (0, 0, 0), INERTIA), joint=mbd.Free())
    model = b.build()
    system = System(model, (HydroBody.create(model, hd, bodies=("barge",), ramp_time=60.0),), name="barge")
    ts = np.arange(0.0, 300.0 + 1e-9, 0.05)
    y0 = initial_state(system)

    def amplitude(omega, beta):
        w = jnp.atleast_1d(omega)
        waves = WaveComponents(amplitude=jnp.full(1, AMP), omega=w, wavenumber=wavenumber(w),
                               direction=jnp.full(1, beta), phase=jnp.zeros(1))
        ys, _ = solve(system, y0, ts, integrator=Integrator("rk4", dt=0.05), waves=waves)
        eta = jax.vmap(lambda t, q, v, z: system.outputs(t, (q, v, z))["hydro/eta"])(ts, *ys)
        late = ts > ts[-1] - 30.0
        c, s = jnp.cos(omega * ts[late]), jnp.sin(omega * ts[late])
        G = jnp.stack([c, s], 1)
        coef = jnp.linalg.lstsq(G, eta[late])[0]
        return jnp.sqrt(coef[0] ** 2 + coef[1] ** 2) / AMP

    idx = np.arange(2, 30, 3)
    omegas = np.asarray(hd.omega)[idx]
    run = jax.jit(jax.vmap(amplitude))
    head = np.asarray(run(jnp.asarray(omegas), jnp.zeros(len(idx))))
    beam = np.asarray(run(jnp.asarray(omegas), jnp.full(len(idx), np.pi / 2)))
    M = np.zeros((6, 6))
    M[:3, :3] = MASS * np.eye(3)
    M[3:, 3:] = INERTIA
    Rh = np.abs(np.asarray(rao(hd, M, wave_direction=0.0)))
    Rb = np.abs(np.asarray(rao(hd, M, wave_direction=np.pi / 2)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = np.asarray(hd.omega)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    for ax, R, X, dof, title, unit in ((axes[0], Rh, head, 2, "heave, head seas", "m/m"),
                                       (axes[1], Rh, head, 4, "pitch, head seas", "rad/m"),
                                       (axes[2], Rb, beam, 3, "roll, beam seas", "rad/m")):
        ax.plot(w, R[:, dof], "k-", lw=1.2, label="frequency domain |X| (BEM)")
        ax.plot(omegas, X[:, dof], "o", color="tab:red", label="time domain, steady amplitude")
        ax.set_xlabel("ω (rad/s)")
        ax.set_ylabel(f"RAO ({unit})")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("20 x 10 x 2 m box barge: linear RAO vs jaxmbd time domain", fontsize=10)
    fig.tight_layout()
    fig.savefig(HERE / "barge_rao.png", dpi=120)
    err = max(np.max(np.abs(X[:, d] / R[idx, d] - 1)) for X, R, d in ((head, Rh, 2), (head, Rh, 4), (beam, Rb, 3)))
    print(f"wrote {HERE / 'barge_rao.png'}; largest amplitude difference {err:.2%}")


if __name__ == "__main__":
    main()
