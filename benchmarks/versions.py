"""Two checkouts of jaxmbd back to back on one machine: end-to-end runs of the crane vessel and the
floating crane, each code in fresh processes taken in turn, so that both see the same machine.

    python -m benchmarks.versions --base DIR [--processes 5]

``DIR``: another checkout (e.g. ``git worktree add /tmp/base <commit>``).  Each process imports the
jaxmbd of its own checkout (it runs with that checkout as its working directory and first on
``sys.path``), builds the two systems with the API both versions share, compiles, then times
``simulate`` three times and keeps the median:

* crane vessel: ``studies/crane_vessel_mc`` (Cibicik et al. 2019, MC on, location I), 16 realisations of 600 s,
  RK4 at 0.1 s, saves every 0.5 s (as ``benchmarks.simulation``);
* floating crane: ``jaxmbd.examples.floating_crane`` in JONSWAP Hs 2.5 m, Tp 9 s (the demo's system),
  16 realisations of 600 s, RK4 at 0.05 s, saves every 0.25 s.

Then forward dynamics alone (the crane vessel's model, chain30 unrolled, chain100 scanned: per
evaluation in a vmapped batch, in a scan, and a reverse-mode gradient), and reverse mode through
20 s of the crane vessel in waves; and whether the two codes compile the forward-dynamics figures
into the same XLA instructions (when they do, a difference in their timings is the machine's noise).

The table gives, per code, the median over the processes and their range (the machine's figures are
bimodal between processes: the median, never the best).  Writes ``benchmarks/results/versions.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .timing import processor

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys, time
sys.path.insert(0, ".")
import jax, numpy as np
import jaxmbd as mbd
import jaxmbd.examples
from jaxmbd import Integrator, simulate, static_equilibrium  # public names: the same in every version

def timed(system, q0, dt, save_dt):
    kw = dict(save_dt=save_dt, integrator=Integrator("rk4", dt=dt), q0=q0, key=jax.random.key(2024), n_realisations=16)
    t = time.perf_counter(); simulate(system, 600.0, **kw); first = time.perf_counter() - t
    walls = []
    for _ in range(3):
        t = time.perf_counter(); simulate(system, 600.0, **kw); walls.append(time.perf_counter() - t)
    return float(np.median(walls)), first

from studies.crane_vessel_mc.system import build
cv, q_cv = build("on", "I")
fc, q_guess = mbd.examples.floating_crane(waves=mbd.hydro.SeaState(spectrum=mbd.hydro.JONSWAP(2.5, 9.0), n_frequencies=80,
                                                                    omega_min=0.2, omega_max=1.8))
q_fc = static_equilibrium(fc, q_guess)
out = {"crane_vessel": timed(cv, q_cv, 0.1, 0.5), "floating_crane": timed(fc, q_fc, 0.05, 0.25)}

import jax.numpy as jnp
try:
    from jaxmbd.simulation import initial_state, solve
except ImportError:  # the module's name before the redesign
    from jaxmbd.simulate import initial_state, solve

def per_call(f, *args, calls=50, rounds=5):
    jax.block_until_ready(f(*args))
    walls = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            r = f(*args)
        jax.block_until_ready(r)
        walls.append((time.perf_counter() - t) / calls)
    return float(np.median(walls))

def kernel(model, n=64):
    rng = np.random.default_rng(0)
    q = jnp.stack([model.normalise(jnp.asarray(rng.normal(size=model.nq))) for _ in range(n)])
    v, tau = (jnp.asarray(rng.normal(size=(n, model.nv))) for _ in range(2))
    fd = lambda q, v, t: mbd.forward_dynamics(model, q, v, t)
    batch = jax.jit(jax.vmap(fd))
    serial = jax.jit(lambda q, v, t: jax.lax.scan(lambda c, x: (c + fd(*x), None), jnp.zeros(model.nv), (q, v, t))[0])
    grad = jax.jit(jax.grad(lambda q, v, t: jnp.sum(jax.vmap(fd)(q, v, t) ** 2), (0, 1)))
    return {"vmap64": per_call(batch, q, v, tau) / n, "scan": per_call(serial, q, v, tau) / n,
            "grad64": per_call(grad, q, v, tau) / n}

for name, model in (("crane_vessel_model", mbd.examples.crane_vessel()), ("chain30", mbd.examples.chain(30)),
                    ("chain100", mbd.examples.chain(100))):
    out[name] = kernel(model)

# reverse mode through a whole run: 20 s of the crane vessel in waves, RK4 at 0.1 s
y0 = initial_state(cv, q_cv)
waves = cv.waves.realise(jax.random.key(1))
ts = tuple(float(t) for t in np.arange(0.0, 20.0 + 1e-9, 0.5))
def loss(v0):
    ys = solve(cv, (y0[0], v0, y0[2]), ts, integrator=Integrator("rk4", dt=0.1), waves=waves)[0]  # either version
    return jnp.sum(ys[0][-1] ** 2)
g = jax.jit(jax.grad(loss))
t = time.perf_counter(); jax.block_until_ready(g(y0[1])); first = time.perf_counter() - t
out["run_gradient"] = {"wall": per_call(g, y0[1], calls=3, rounds=3), "first": first}
print("RESULT " + json.dumps(out))
"""


PROGRAMS = r"""
import hashlib, json, re, sys
sys.path.insert(0, ".")
import jax, jax.numpy as jnp, numpy as np
import jaxmbd as mbd
import jaxmbd.examples

def signature(f, *a):
    # the optimised program's instructions (result shape and opcode, in order), without names or source locations
    text = jax.jit(f).lower(*a).compile().as_text()
    ops = re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = (.+?) ([a-z\-]+)\(", text, re.M)
    return hashlib.sha256(repr(ops).encode()).hexdigest()[:16], len(ops)

out = {}
for name, model in (("crane_vessel_model", mbd.examples.crane_vessel()), ("chain30", mbd.examples.chain(30)),
                    ("chain100", mbd.examples.chain(100))):
    rng = np.random.default_rng(0)
    q = jnp.stack([model.normalise(jnp.asarray(rng.normal(size=model.nq))) for _ in range(64)])
    v, tau = (jnp.asarray(rng.normal(size=(64, model.nv))) for _ in range(2))
    fd = lambda q, v, t: mbd.forward_dynamics(model, q, v, t)
    out[name] = {"vmap64": signature(jax.vmap(fd), q, v, tau),
                 "grad64": signature(jax.grad(lambda q, v, t: jnp.sum(jax.vmap(fd)(q, v, t) ** 2), (0, 1)), q, v, tau)}
print("RESULT " + json.dumps(out))
"""


def probe(tree: Path, script: str = PROBE) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), JAXMBD_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-c", script], cwd=tree, env=env, capture_output=True, text=True, check=True)
    line = next(l for l in done.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def git_describe(tree: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                              check=True).stdout.strip()[:80]
    except (subprocess.CalledProcessError, FileNotFoundError):
        return str(tree)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.versions", description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the other checkout")
    ap.add_argument("--processes", type=int, default=5, help="processes per code, taken in turn")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "versions.md"))
    args = ap.parse_args(argv)
    trees = {"base": Path(args.base).resolve(), "this": ROOT}
    runs = {k: [] for k in trees}
    for p in range(args.processes):
        for k, tree in trees.items():
            t = time.perf_counter()
            runs[k].append(probe(tree))
            print(f"process {p + 1}/{args.processes} {k}: {runs[k][-1]} ({time.perf_counter() - t:.0f} s)", flush=True)
    lines = [
        "## Two versions back to back (end to end, 16 realisations x 600 s)",
        "",
        f"`python -m benchmarks.versions --base DIR` on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} cores, {processor()}), {time.strftime('%Y-%m-%d')}; "
        f"{args.processes} processes per code, taken in turn; each process the median of 3 runs after its compile.",
        "",
        *(f"- {k}: {git_describe(tree)}" for k, tree in trees.items()),
        "",
        "| system | code | median over processes (s) | range (s) | first call with compile (s, median) |",
        "|---|---|---|---|---|",
    ]
    for system in ("crane_vessel", "floating_crane"):
        for k in trees:
            walls = [r[system][0] for r in runs[k]]
            firsts = [r[system][1] for r in runs[k]]
            lines.append(f"| {system.replace('_', ' ')} | {k} | {statistics.median(walls):.2f} | "
                         f"{min(walls):.2f}-{max(walls):.2f} | {statistics.median(firsts):.1f} |")
        ratio = statistics.median(r[system][0] for r in runs["this"]) / statistics.median(r[system][0] for r in runs["base"])
        lines.append(f"| {system.replace('_', ' ')} | this / base | {ratio:.3f} | | |")
    lines += ["", "Forward dynamics per evaluation (µs; vmap over 64 states, a scan over 64 states, reverse-mode gradient in "
              "q and v of a 64-state batch), and reverse mode through 20 s of the crane vessel in waves (RK4 at 0.1 s; s):", "",
              "| figure | base: median (range) | this: median (range) | this / base |", "|---|---|---|---|"]
    for model in ("crane_vessel_model", "chain30", "chain100"):
        for fig in ("vmap64", "scan", "grad64"):
            b, t = ([r[model][fig] * 1e6 for r in runs[k]] for k in ("base", "this"))
            lines.append(f"| {model.replace('_model', ' (model)').replace('_', ' ')} {fig} | {statistics.median(b):.2f} "
                         f"({min(b):.2f}-{max(b):.2f}) | {statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f}) | "
                         f"{statistics.median(t) / statistics.median(b):.3f} |")
    b, t = ([r["run_gradient"]["wall"] for r in runs[k]] for k in ("base", "this"))
    lines.append(f"| crane vessel 20 s run, gradient (s) | {statistics.median(b):.2f} ({min(b):.2f}-{max(b):.2f}) | "
                 f"{statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f}) | {statistics.median(t) / statistics.median(b):.3f} |")
    b, t = ([r["run_gradient"]["first"] for r in runs[k]] for k in ("base", "this"))
    lines.append(f"| same, first call with compile (s) | {statistics.median(b):.1f} | {statistics.median(t):.1f} | "
                 f"{statistics.median(t) / statistics.median(b):.3f} |")
    programs = {k: probe(tree, PROGRAMS) for k, tree in trees.items()}
    same = [f"{m} {fig}" for m in programs["base"] for fig in programs["base"][m] if programs["base"][m][fig] == programs["this"][m][fig]]
    differ = [f"{m} {fig}" for m in programs["base"] for fig in programs["base"][m] if programs["base"][m][fig] != programs["this"][m][fig]]
    lines += ["", "Compiled programs of the forward-dynamics figures (XLA's optimised instructions, shapes and opcodes in "
              "order, without names or source locations): " + (f"identical in both codes for {', '.join(same)}" if same else "none identical")
              + (f"; different for {', '.join(differ)}" if differ else "") + "."]
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    from .report import assemble

    assemble()
    print(text)


if __name__ == "__main__":
    main()
