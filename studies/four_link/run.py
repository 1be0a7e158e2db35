"""Ham et al. (2009), Fig. 5-6: four revolute links (0.1 m, 1 kg) released under gravity.

Two routes to the same motion: the articulated-body algorithm (jaxmbd's
forward dynamics) and Ham et al. (2009)'s velocity transformation, M̄ = Jᵀ M J with
J = H T R, solved with a Cholesky factorisation.  Writes angles.png and
prints the energy drift and the largest difference between the routes.

    python studies/four_link/run.py            # 20 s, as in the README
    python studies/four_link/run.py --smoke    # 2 s, for CI
"""

from __future__ import annotations

import argparse
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import jaxmbd as mbd
from jaxmbd.examples import four_link

HERE = Path(__file__).parent
Q0 = jnp.array([0.0, 0.0, 0.0, 0.0])  # links horizontal, at rest


def rhs_aba(model):
    def f(t, y, args):
        q, v = y
        return v, mbd.forward_dynamics(model, q, v, jnp.zeros_like(v))

    return f


def rhs_velocity_transformation(model):
    def f(t, y, args):
        q, v = y
        M = mbd.mass_matrix_velocity_transformation(model, q)
        h = mbd.nonlinear_effects(model, q, v)
        return v, jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), -h)

    return f


def integrate(f, duration, n_save=401, rtol=1e-11):
    ts = jnp.linspace(0.0, duration, n_save)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(f), diffrax.Dopri8(), 0.0, duration, None, (Q0, jnp.zeros(4)),
                              saveat=diffrax.SaveAt(ts=ts), stepsize_controller=diffrax.PIDController(rtol=rtol, atol=rtol),
                              max_steps=200_000)
    return np.asarray(ts), np.asarray(sol.ys[0]), np.asarray(sol.ys[1])


def run(duration: float):
    model = four_link()
    t, qa, va = integrate(rhs_aba(model), duration)
    _, qv, _ = integrate(rhs_velocity_transformation(model), duration)
    E = np.asarray(jax.vmap(lambda q, v: mbd.total_energy(model, q, v))(qa, va))
    KE = np.asarray(jax.vmap(lambda q, v: mbd.kinetic_energy(model, q, v))(qa, va))
    return model, t, qa, qv, np.max(np.abs(E - E[0])) / np.max(KE)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args(argv)
    duration = 2.0 if args.smoke else 20.0
    _, t, qa, qv, drift = run(duration)
    # the motion is chaotic: compare the routes over the first seconds, where round-off has not grown yet
    early = t <= 2.0
    diff = np.max(np.abs(qa[early] - qv[early]))
    print(f"{'duration (s)':<44}{duration:>12.1f}")
    print(f"{'energy drift / max kinetic energy (ABA)':<44}{drift:>12.2e}")
    print(f"{'max |q_ABA - q_JHTR| over the first 2 s (rad)':<44}{diff:>12.2e}")
    if not args.smoke:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        for k in range(4):
            ax.plot(t[t <= 5], np.degrees(qa[t <= 5, k]), label=f"θ{k + 1} (ABA)")
            ax.plot(t[t <= 5], np.degrees(qv[t <= 5, k]), "k:", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("relative joint angle (deg)")
        ax.set_title("4-link pendulum released from horizontal (dotted: J = H T R route)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(HERE / "angles.png", dpi=120)
        print(f"wrote {HERE / 'angles.png'}")
    return drift, diff


if __name__ == "__main__":
    main()
