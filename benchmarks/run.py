"""Forward-dynamics benchmark: jaxmbd beside Pinocchio and MuJoCo; writes BENCHMARKS.md.

    python -m benchmarks            # full run (several minutes)
    python -m benchmarks --quick    # fewer states and repeats (about 3 minutes)

Every figure is a median over repeats after warm-up, measured in this one run.
The XLA-options comparison runs the crane8 figures again in subprocesses: with jaxmbd's
default (YNN fusions off, memory-optimised schedule), with XLA's default schedule, with XLA's
defaults (``JAXMBD_XLA_DEFAULTS=0``) and with ``XLA_FLAGS=--xla_cpu_use_fusion_emitters=false``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxmbd as mbd  # noqa: E402
from jaxmbd import _xla  # noqa: E402
from benchmarks import peers  # noqa: E402
from benchmarks.states import models, random_states  # noqa: E402
from benchmarks.timing import compile_times, fmt_ratio, fmt_us, processor, time_call, time_loop  # noqa: E402

FD = mbd.forward_dynamics


def cast(tree, dtype):
    return jax.tree.map(lambda x: x.astype(dtype) if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating) else x, tree)


def scan_fd(model, Q, V, T):
    def body(carry, x):
        return carry, FD(model, *x)

    return jax.lax.scan(body, 0, (Q, V, T))[1]


def vmap_fd(model, Q, V, T):
    return jax.vmap(FD, (None, 0, 0, 0))(model, Q, V, T)


def bench_jax(model, Q, V, T, dtype, *, n_scan, batches, repeats, options=None):
    m = cast(model, dtype)
    Q, V, T = (jnp.asarray(x, dtype) for x in (Q, V, T))
    out = {}
    # compiled as forward_dynamics_jit and simulate compile, unless other options are given
    jit = dict(compiler_options=mbd.FORWARD_JIT_OPTIONS if options is None else options)
    ct, comp = compile_times(FD, m, Q[0], V[0], T[0], **jit)
    out["compile_single"] = ct.__dict__ | {"total": ct.total}
    out["single"] = time_call(comp, m, Q[0], V[0], T[0], repeats=repeats).median
    ct, comp = compile_times(scan_fd, m, Q[:n_scan], V[:n_scan], T[:n_scan], **jit)
    out["compile_scan"] = ct.__dict__ | {"total": ct.total}
    out["scan"] = time_call(comp, m, Q[:n_scan], V[:n_scan], T[:n_scan], repeats=repeats).per(n_scan)
    out["fusions_scan"] = comp.as_text().count(" fusion(")
    for b in batches:
        ct, comp = compile_times(vmap_fd, m, Q[:b], V[:b], T[:b], **jit)
        out[f"vmap{b}"] = time_call(comp, m, Q[:b], V[:b], T[:b], repeats=repeats).per(b)
        out[f"compile_vmap{b}"] = ct.total
    return out


def bench_pinocchio(model, Q, V, T, repeats):
    import pinocchio as pin

    pm = peers.pinocchio_model(model)
    pd = pm.createData()
    Qp = peers.to_pinocchio_q(model, Q)
    qs, vs, ts = list(Qp), list(V), list(T)
    aba = pin.aba

    def loop():
        for q, v, t in zip(qs, vs, ts):
            aba(pm, pd, q, v, t)

    ours = np.asarray(FD(model, jnp.asarray(Q[0]), jnp.asarray(V[0]), jnp.asarray(T[0])))
    err = float(np.max(np.abs(aba(pm, pd, qs[0], vs[0], ts[0]) - ours)) / max(1.0, np.max(np.abs(ours))))
    return time_loop(loop, len(qs), repeats=repeats).median, err


def bench_mujoco(model, name, Q, V, T, repeats):
    import mujoco

    mjm = mujoco.MjModel.from_xml_string(peers.mjcf(model, name))
    d = mujoco.MjData(mjm)
    Qm, Vm, Tm = peers.to_mujoco(model, Q, V, T)
    fwd = mujoco.mj_forward
    qs, vs, ts = list(Qm), list(Vm), list(Tm)

    def loop():
        for q, v, t in zip(qs, vs, ts):
            d.qpos[:] = q
            d.qvel[:] = v
            d.qfrc_applied[:] = t
            fwd(mjm, d)

    t_loop = time_loop(loop, len(qs), repeats=repeats).median
    t_fwd = time_call(fwd, mjm, d, repeats=repeats, block=False).median
    qdd = FD(model, jnp.asarray(Q[0]), jnp.asarray(V[0]), jnp.asarray(T[0]))
    M = mbd.mass_matrix(model, jnp.asarray(Q[0]))
    errs = peers.mujoco_check(model, mjm, Q, V, T, qdd, M)
    return t_loop, t_fwd, errs


# ---------------------------------------------------------------------------
# C++ peers


def _site():
    """site-packages of this interpreter (where the pin wheel puts cmeel.prefix)."""
    return Path(jax.__file__).resolve().parent.parent


def build_cpp(log):
    """Compile benchmarks/cpp/peers_bench.cpp against the headers in the pin wheel; None on failure."""
    import mujoco

    site = _site()
    prefix = site / "cmeel.prefix"
    mj = Path(mujoco.__file__).resolve().parent
    src = ROOT / "benchmarks" / "cpp" / "peers_bench.cpp"
    out_dir = ROOT / "benchmarks" / "cpp" / "build"
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / "peers_bench"
    if exe.exists() and exe.stat().st_mtime > src.stat().st_mtime:
        return exe, "cached"
    eigen = next((p for p in ("/usr/include/eigen3", str(prefix / "include" / "eigen3")) if Path(p, "Eigen").exists()), None)
    if eigen is None or not (prefix / "include" / "pinocchio").exists() or shutil.which("g++") is None:
        log("C++ peer: no Eigen headers, Pinocchio headers or g++; skipped")
        return None, "missing headers"
    mjlib = next(iter(sorted(mj.glob("libmujoco.so*"))), None)
    cmd = ["g++", "-O3", "-DNDEBUG", "-std=c++17",
           "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
           f"-I{prefix / 'include'}", f"-I{eigen}", str(src), "-o", str(exe)]
    if mjlib is not None and (mj / "include" / "mujoco" / "mujoco.h").exists():
        cmd[1:1] = ["-DWITH_MUJOCO", f"-I{mj / 'include'}"]
        cmd += [f"-L{mj}", f"-l:{mjlib.name}", f"-Wl,-rpath,{mj}"]
    log("building the C++ peer (about 1.5 min) ...")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        log("C++ peer build failed:\n" + r.stderr[-2000:])
        return None, "build failed"
    return exe, " ".join(cmd)


def _joint_code(j):
    from jaxmbd.joints import Free, Prismatic, Revolute, Spherical

    ax = {(1.0, 0.0, 0.0): "X", (0.0, 1.0, 0.0): "Y", (0.0, 0.0, 1.0): "Z"}
    if isinstance(j, Free):
        return "FF", ""
    if isinstance(j, Spherical):
        return "SP", ""
    a = ax.get(tuple(float(x) for x in j.axis))
    kind = "R" if isinstance(j, Revolute) else "P"
    assert isinstance(j, (Revolute, Prismatic))
    return (kind + a, "") if a else (kind + "U", " ".join(f"{x:.17g}" for x in j.axis))


def run_cpp(exe, model, name, Q, V, T, workdir: Path):
    lines = [str(model.n_bodies), " ".join(f"{x:.17g}" for x in np.asarray(model.gravity))]
    for i, j in enumerate(model.joints):
        code, extra = _joint_code(j)
        m, c, Ic = peers._parts(model, i)
        nums = list(np.asarray(model.placement_R[i]).ravel()) + list(np.asarray(model.placement_p[i])) + [m] + list(c) + list(Ic.ravel())
        lines.append(f"{code} {model.parents[i]} " + " ".join(f"{x:.17g}" for x in nums) + (" " + extra if extra else ""))
    (workdir / f"{name}.model").write_text("\n".join(lines) + "\n")
    Qp = peers.to_pinocchio_q(model, Q)

    def states(path, A, B, C):
        with open(path, "w") as f:
            f.write(f"{len(A)} {A.shape[1]} {B.shape[1]}\n")
            for X in (A, B, C):
                np.savetxt(f, X, fmt="%.17g")

    states(workdir / f"{name}.states", Qp, V, T)
    args = [str(exe), str(workdir / f"{name}.model"), str(workdir / f"{name}.states")]
    Qm, Vm, Tm = peers.to_mujoco(model, Q, V, T)
    (workdir / f"{name}.xml").write_text(peers.mjcf(model, name))
    states(workdir / f"{name}.mjstates", Qm, Vm, Tm)
    args += [str(workdir / f"{name}.xml"), str(workdir / f"{name}.mjstates")]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    out = {}
    for line in r.stdout.splitlines():
        k, *vals = line.split()
        out[k] = [float(x) for x in vals]
    ours = np.asarray(FD(model, jnp.asarray(Q[0]), jnp.asarray(V[0]), jnp.asarray(T[0])))
    err = float(np.max(np.abs(np.asarray(out["aba_first"]) - ours)) / max(1.0, np.max(np.abs(ours)))) if "aba_first" in out else None
    return (out.get("aba_ns", [None])[0], out.get("mj_forward_ns", [None])[0], err)


# ---------------------------------------------------------------------------
# the fusion-emitter comparison (subprocess)


def crane_only(args):
    """Child-process entry: crane8 float64 figures as JSON on stdout."""
    model = models()["crane8"]
    Q, V, T = random_states(model, args.n_states)
    r = bench_jax(model, Q, V, T, jnp.float64, n_scan=min(args.n_states, 1000), batches=(64, args.n_states), repeats=args.repeats,
                  options={} if args.xla_default_scheduler else None)
    r["vmap_all"] = r[f"vmap{args.n_states}"]
    print("JSON" + json.dumps({k: r[k] for k in ("single", "scan", "vmap64", "vmap_all", "compile_single", "compile_scan", "fusions_scan")}))


def fusion_compare(args, log):
    res = {}
    cases = (("jaxmbd's default (YNN fusions off and Eigen on one thread, set at import; memory-optimised schedule)", "", {}, []),
             ("jaxmbd's XLA_FLAGS, XLA's default (concurrency-optimised) schedule", "", {}, ["--xla-default-scheduler"]),
             ("XLA's defaults (`JAXMBD_XLA_DEFAULTS=0`)", "", {"JAXMBD_XLA_DEFAULTS": "0"}, []),
             ("plus fusion emitters off", "--xla_cpu_use_fusion_emitters=false", {}, []))
    for label, flags, extra_env, extra_args in cases:
        env = dict(os.environ, **extra_env)
        inherited = env.get("XLA_FLAGS", "")
        if extra_env:  # without the option this process's import of jaxmbd added
            inherited = " ".join(f for f in inherited.split() if f not in _xla.XLA_FLAGS_SET)
        env["XLA_FLAGS"] = (inherited + " " + flags).strip()
        log(f"crane8 in a subprocess, XLA_FLAGS={env['XLA_FLAGS']!r} {extra_env} {' '.join(extra_args)} ...")
        r = subprocess.run([sys.executable, "-m", "benchmarks.run", "--crane-only", "--n-states", str(args.n_states),
                            "--repeats", str(args.repeats)] + extra_args, capture_output=True, text=True, cwd=ROOT, env=env)
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith("JSON")), None)
        res[label] = json.loads(line[4:]) if line else {"error": r.stderr[-500:]}
    return res


# ---------------------------------------------------------------------------
# report


def machine():
    cpu = processor()
    vers = {"python": platform.python_version(), "jax": jax.__version__}
    import jaxlib

    vers["jaxlib"] = jaxlib.__version__
    for mod in ("pinocchio", "mujoco", "numpy"):
        try:
            vers[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            vers[mod] = "not installed"
    return {"cpu": cpu, "cores": os.cpu_count(), "load": os.getloadavg(), "versions": vers,
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "xla_flags": os.environ.get("XLA_FLAGS", "")}


def write_report(path: Path, info, results, fusion, cpp_status, args, notes_path: Path):
    us = fmt_us
    L = []
    L.append("## Forward dynamics against Pinocchio and MuJoCo\n")
    L.append(f"Generated by `python -m benchmarks{' --quick' if args.quick else ''}` on {info['date']}.\n")
    L.append(f"- Machine: {info['cpu']}, {info['cores']} cores; load average at start "
             f"{info['load'][0]:.2f} / {info['load'][1]:.2f} / {info['load'][2]:.2f} (1/5/15 min)")
    L.append("- Versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    L.append(f"- XLA_FLAGS: `{info['xla_flags'] or '(none)'}`; float64 via jax_enable_x64; the model is passed as a jit argument (a pytree), not closed over")
    L.append(f"- States: {args.n_states} random states per model (seed fixed in benchmarks/states.py: unit quaternions, "
             "angles in [-π, π], v and τ standard normal), the same for every tool")
    L.append("- Timing: warm-up, then the median of repeated runs (benchmarks/timing.py); JAX results are waited for "
             "with block_until_ready. All times in microseconds (µs) per forward-dynamics evaluation.\n")
    L.append("Columns: *single* = one jitted call on one state, dispatch included; *scan* = the states looped with "
             "`lax.scan` inside one jit, time / n (the per-evaluation cost inside a simulation); *vmap B* = one jitted "
             "`vmap` over a batch of B states, time / B; *pin* = `pinocchio.aba` called from Python in a loop over the "
             "same states (per call, nothing subtracted); *pin C++* = `pinocchio::aba` in a C++ loop (g++ -O3, "
             "headers of the `pin` wheel); *mj* = `mujoco.mj_forward` from Python (state copied in each call); "
             "*mj C++* = `mj_forward` in a C++ loop. Ratios are ours / pin (Python).\n")
    for dt in ("float64", "float32"):
        L.append(f"\n### Forward dynamics, {dt}\n")
        if dt == "float64":
            L.append("| model | nv | single | scan | vmap 1 | vmap 64 | vmap 1024 | pin | pin C++ | mj | mj C++ | scan / pin | vmap64 / pin | vmap1024 / pin |")
            L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        else:
            L.append("| model | nv | single | scan | vmap 1 | vmap 64 | vmap 1024 | pin (f64) | scan / pin | vmap64 / pin | vmap1024 / pin |")
            L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, r in results.items():
            j = r.get(dt)
            if j is None:
                continue
            g = lambda k: j.get(k)  # noqa: E731
            pin_t = r.get("pin")
            row = [name, str(r["nv"]), us(g("single")), us(g("scan")), us(g("vmap1")), us(g("vmap64")), us(g("vmap1024"))]
            if dt == "float64":
                row += [us(pin_t), us(r["pin_cpp"] * 1e-9) if r.get("pin_cpp") else "–", us(r.get("mj")),
                        us(r["mj_cpp"] * 1e-9) if r.get("mj_cpp") else "–"]
            else:
                row += [us(pin_t)]
            row += [fmt_ratio(g("scan"), pin_t), fmt_ratio(g("vmap64"), pin_t), fmt_ratio(g("vmap1024"), pin_t)]
            L.append("| " + " | ".join(row) + " |")
    from jaxmbd.dynamics import DEFAULT_OPTIONS
    from jaxmbd.dynamics.tree import level_groups, segments

    paths = []
    for name in results:
        m = models()[name]
        segs = segments(m, DEFAULT_OPTIONS)
        runs = [e - s for s, e in segs if e - s > 1]
        groups = [len(g) for g in level_groups(m, segs, DEFAULT_OPTIONS)[1].values()]
        paths.append(f"{name} " + (f"scans {'+'.join(map(str, runs))} of its bodies" if runs else "is unrolled")
                     + (f", batching {'+'.join(map(str, groups))} bodies by level" if groups else ""))
    L.append(f"\nABA path: serial runs of at least {DEFAULT_OPTIONS.scan_min_run} one-DOF joints are written in one frame (placements, twists and bias forces "
             "batched, the articulated-inertia and acceleration recursions as `lax.scan`s; NOTES, \"Deep chains\"), "
             "shorter trees are unrolled body by body in body frames, with the 1-DOF bodies that share a depth below their parents "
             "taken together in each pass (NOTES, \"Wide trees\"); here " + ", ".join(paths) + ". *mj* includes copying the state into MjData from Python; "
             "mj_forward alone, called repeatedly on one state from Python: "
             + ", ".join(f"{n} {us(r.get('mj_fwd_only'))}" for n, r in results.items()) + " µs.")
    L.append("\n### Compile time (s): trace + lower + compile, jax AOT API\n")
    L.append("| model | dtype | single: trace | lower | compile | total | scan: total | vmap 64: total | XLA fusions in the scan program |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        for dt in ("float64", "float32"):
            j = r.get(dt)
            if j is None:
                continue
            c = j["compile_single"]
            L.append(f"| {name} | {dt} | {c['trace']:.2f} | {c['lower']:.2f} | {c['compile']:.2f} | {c['total']:.2f} | "
                     f"{j['compile_scan']['total']:.2f} | {j.get('compile_vmap64', float('nan')):.2f} | {j.get('fusions_scan', '–')} |")
    # scaling exponent
    s = {n: r.get("float64", {}).get("scan") for n, r in results.items()}
    if s.get("chain10") and s.get("chain100"):
        e = np.log(s["chain100"] / s["chain10"]) / np.log(10.0)
        L.append(f"\nScaling: scan time per evaluation grows as n^{e:.2f} from chain10 to chain100 (O(n) would be n^1.00).")
        if s.get("chain30"):
            e3 = np.log(s["chain100"] / s["chain30"]) / np.log(100 / 30)
            L.append(f"From chain30 to chain100 (both on the scanned path): n^{e3:.2f}.")
        p = {n: r.get("pin") for n, r in results.items()}
        if p.get("chain10") and p.get("chain100"):
            L.append(f"Pinocchio (Python call): n^{np.log(p['chain100'] / p['chain10']) / np.log(10.0):.2f}.")
    L.append("\n### Checks (same model in every tool; first state)\n")
    L.append("| model | pin aba vs ours (rel) | pin C++ aba vs ours | MuJoCo M vs ours (free joint mapped) | MuJoCo qacc vs ours |")
    L.append("|---|---|---|---|---|")
    for name, r in results.items():
        f = lambda x: "–" if x is None else f"{x:.1e}"  # noqa: E731
        me = r.get("mj_err") or (None, None)
        L.append(f"| {name} | {f(r.get('pin_err'))} | {f(r.get('pin_cpp_err'))} | {f(me[0])} | {f(me[1])} |")
    L.append(f"\nC++ peer: {cpp_status}\n")
    if fusion:
        L.append("\n### XLA CPU options (crane8, float64, subprocess each)\n")
        L.append(f"| options | single | scan | vmap 64 | vmap {args.n_states} | compile single (s) | compile scan (s) | fusions (scan) |")
        L.append("|---|---|---|---|---|---|---|---|")
        for label, f in fusion.items():
            if "error" in f:
                L.append(f"| {label} | error: {f['error'][-80:]!r} | | | | | | |")
                continue
            L.append(f"| {label} | {us(f['single'])} | {us(f['scan'])} | {us(f['vmap64'])} | {us(f['vmap_all'])} | "
                     f"{f['compile_single']['total']:.2f} | {f['compile_scan']['total']:.2f} | {f['fusions_scan']} |")
    if notes_path.exists():
        L.append("\n" + notes_path.read_text())
    path.write_text("\n".join(L) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer states and repeats (about 3 minutes)")
    ap.add_argument("--models", nargs="*", help="subset of crane8 chain10 chain30 chain100 floats32")
    ap.add_argument("--n-states", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ Pinocchio / MuJoCo timings")
    ap.add_argument("--no-fusion-check", action="store_true", help="skip the fusion-emitter subprocess comparison")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "dynamics.md"),
                    help="this section's file; BENCHMARKS.md is reassembled from benchmarks/results/")
    ap.add_argument("--json", default=None, help="also write the raw figures here")
    ap.add_argument("--crane-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--xla-default-scheduler", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.n_states is None:
        args.n_states = 256 if args.quick else 1024
    if args.quick:
        args.repeats = min(args.repeats, 5)
    if args.crane_only:
        return crane_only(args)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    t_start = time.perf_counter()
    info = machine()
    all_models = models()
    names = args.models or ["crane8", "chain10", "chain30", "chain100", "floats32"]
    cpp_exe, cpp_status = (None, "skipped (--no-cpp)") if args.no_cpp else build_cpp(log)
    if cpp_exe is not None:
        cpp_status = f"built from benchmarks/cpp/peers_bench.cpp ({'cached binary' if cpp_status == 'cached' else 'g++ -O3'})"
    workdir = ROOT / "benchmarks" / "cpp" / "build"
    results = {}
    for name in names:
        model = all_models[name]
        Q, V, T = random_states(model, args.n_states)
        r = {"nv": model.nv}
        batches = tuple(b for b in (1, 64, 1024) if b <= args.n_states)
        for dt in (jnp.float64, jnp.float32):
            log(f"{name} {jnp.dtype(dt).name}: jaxmbd ...")
            r[jnp.dtype(dt).name] = bench_jax(model, Q, V, T, dt, n_scan=min(args.n_states, 1000),
                                              batches=batches, repeats=args.repeats)
        log(f"{name}: pinocchio, mujoco ...")
        r["pin"], r["pin_err"] = bench_pinocchio(model, Q, V, T, args.repeats)
        r["mj"], r["mj_fwd_only"], r["mj_err"] = bench_mujoco(model, name, Q, V, T, args.repeats)
        if cpp_exe is not None:
            try:
                r["pin_cpp"], r["mj_cpp"], r["pin_cpp_err"] = run_cpp(cpp_exe, model, name, Q, V, T, workdir)
            except Exception as exc:  # noqa: BLE001
                log(f"C++ peer failed on {name}: {exc}")
        results[name] = r
        log(f"{name}: scan {fmt_us(r['float64']['scan'])} µs, pin {fmt_us(r['pin'])} µs")
    fusion = None if args.no_fusion_check else fusion_compare(args, log)
    write_report(Path(args.out), info, results, fusion, cpp_status, args, ROOT / "benchmarks" / "NOTES.md")
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "results": results, "fusion": fusion}, indent=1, default=str))
    from benchmarks.report import assemble

    log(f"wrote {args.out} and {assemble()} in {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
