"""Reading WAMIT output (the ``.out`` file, or the numeric ``.1`` / ``.3`` / ``.hst`` files) into
:class:`~jaxmbd.hydro.coefficients.HydroData`; WAMIT's e^{+iωt} excitation is conjugated on read."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np

from ..errors import DataFileNotFoundError
from .coefficients import _TWO_PI, HydroData, HydroDataError, _added_mass_inf_ogilvie, _checked_hydro, _is_rot

# --------------------------------------------------------------------------- WAMIT
_FLOAT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[EeDd][-+]?\d+)?"


def _floats(line):
    return [float(v.replace("D", "E").replace("d", "e")) for v in re.findall(_FLOAT, line)]


def _wamit_scales(n, rho, g, length):
    """Dimensional factors: A ρL^k, B ρωL^k (k = 3 + #rotations), F ρgL^(2+rot), C ρgL^(2+#rot)."""
    rot = _is_rot(n).astype(int)
    k = 3 + rot[:, None] + rot[None, :]
    mass = rho * length**k
    force = rho * g * length ** (2 + rot)
    stiff = rho * g * length ** (2 + rot[:, None] + rot[None, :])
    return mass, force, stiff


_WAMIT_BODY_LINES = (
    ("Volumes (VOLX,VOLY,VOLZ):", "vol"),
    ("Center of Buoyancy (Xb,Yb,Zb):", "cob"),
    ("Center of Gravity  (Xg,Yg,Zg):", "cog"),
    ("C(3,3),C(3,4),C(3,5):", "c3"),
    ("C(4,4),C(4,5),C(4,6):", "c4"),
    ("C(5,5),C(5,6):", "c5"),
)


def _wamit_body_line(s, bodies) -> bool:
    """Record one line of a body's header of a WAMIT .out file in ``bodies[-1]`` (a new body at its
    "Body number" line); False when the line is none of them."""
    if s.startswith("Body number: N="):
        bodies.append({})
        return True
    if not bodies:
        return False
    body = bodies[-1]
    if s.startswith("XBODY ="):
        body["ref"] = [float(v) for _, v in re.findall(r"(XBODY|YBODY|ZBODY)\s*=\s*(" + _FLOAT + ")", s)]
        return True
    for prefix, key in _WAMIT_BODY_LINES:
        if s.startswith(prefix):
            body[key] = _floats(s.split(":", 1)[1])
            return True
    if s.startswith("Radii of gyration:"):
        body["gyration"] = [_floats(s.split(":", 1)[1])]
        return True
    if len(body.get("gyration", [])) in (1, 2) and len(_floats(s)) == 3 and not s[:1].isalpha():
        body["gyration"].append(_floats(s))  # the second and third rows of the radii of gyration
        return True
    return False


def _wamit_period(s, freqs):
    """The tables of the frequency a WAMIT "Wave period" line opens (PER = infinite is ω = 0, zero is
    ω = ∞), or None when the line is not one."""
    if s.startswith("Wave period = infinite"):
        w = 0.0
    elif s.startswith("Wave period = zero"):
        w = math.inf
    elif s.startswith("Wave period (sec) ="):
        w = _TWO_PI / _floats(s.split("=", 1)[1])[0]
    else:
        return None
    return freqs.setdefault(w, {"A": {}, "B": {}, "exc": {}})


class _WamitTables:
    """The numeric tables between the text of a WAMIT .out file's lines."""

    def __init__(self, lines, path):
        self.lines, self.path, self.n = lines, path, len(lines)

    def is_row(self, j, ncols_min):
        tok = self.lines[j].split()
        return bool(tok) and re.fullmatch(r"-?\d+", tok[0]) is not None and len(_floats(self.lines[j])) >= ncols_min

    def unreadable(self, j):
        """The first token of line j that is not a finite number, where line j starts as a table row does."""
        tok = self.lines[j].split()
        if not tok or re.fullmatch(r"-?\d+", tok[0]) is None:
            return None
        for t in tok:
            if re.fullmatch(_FLOAT, t) is None:
                return t
        return None

    def table(self, start, ncols_min):
        """Rows of numbers after at most 4 header/blank lines, up to the first non-row; a row with a
        token that is not a number (NaN, a garbled value) is an error, not the end of the table."""
        j = start
        while j < min(start + 4, self.n) and not self.is_row(j, ncols_min):
            j += 1
        rows = []
        while j < self.n and (self.is_row(j, ncols_min) or self.unreadable(j) is not None):
            bad = self.unreadable(j)
            if bad is not None:
                raise HydroDataError(str(self.path), f"line {j + 1}", f"cannot read {bad!r} as a number in the table "
                                     f"row {self.lines[j].strip()!r}")
            rows.append(_floats(self.lines[j]))
            j += 1
        return rows, j

    def added_mass(self, i, current, damping):
        """Read the added-mass (and damping) table after line i into ``current``; the next line."""
        rows, j = self.table(i + 1, 4 if damping else 3)
        for r in rows:
            ii, jj = int(r[0]), int(r[1])
            current["A"][(ii, jj)] = r[2]
            if damping:
                current["B"][(ii, jj)] = r[3]
        return j

    def excitation(self, i, current, kind):
        """Read the excitation tables (one per heading) after line i into ``current``; the next line."""
        j = i + 1
        while j < self.n:
            t = self.lines[j].strip()
            if t.startswith("Wave Heading (deg)"):
                heading = _floats(t.split(":", 1)[1])[0]
                rows, j = self.table(j + 1, 3)
                exc = current["exc"].setdefault(kind, {}).setdefault(heading, {})
                for r in rows:
                    exc[int(r[0])] = r[1] * np.exp(1j * math.radians(r[2]))
                continue
            if t:
                break
            j += 1
        return j


def _parse_wamit_out(path):
    """Raw nondimensional tables from a WAMIT .out file."""
    lines = Path(path).read_text(errors="replace").splitlines()
    tables = _WamitTables(lines, path)
    bodies, gdf_names = [], []
    freqs = {}  # omega -> dict(A=..., B=..., exc={heading: {dof: complex}})
    current = None
    g_file = None
    i = 0
    in_gdf = False
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("Input from Geometric Data Files"):
            in_gdf = True
        elif in_gdf and s.startswith("Input from Potential Control File"):
            in_gdf = False
        elif in_gdf:
            m = re.match(r"N=\s*(\d+)\s+(\S+)", s)
            if m:
                gdf_names.append(Path(m.group(2)).stem)
        if s.startswith("Gravity:"):
            g_file = _floats(s)[0]
        if _wamit_body_line(s, bodies):
            pass
        elif (opened := _wamit_period(s, freqs)) is not None:
            current = opened
        elif current is not None and s.startswith("ADDED-MASS"):
            i = tables.added_mass(i, current, "DAMPING" in s)
            continue
        elif current is not None and (s.startswith("DIFFRACTION EXCITING FORCES") or s.startswith("HASKIND EXCITING FORCES")):
            i = tables.excitation(i, current, "diffraction" if s.startswith("DIFFRACTION") else "haskind")
            continue
        i += 1
    return bodies, gdf_names, freqs, g_file


def _assemble_wamit(source, freqs_A, freqs_B, exc_tables, n, headings):
    """Dense nondimensional arrays from {omega: {(i, j): value}} dictionaries (1-based i, j)."""
    omegas = sorted(w for w in freqs_A if 0 < w < math.inf)
    A = np.zeros((len(omegas), n, n))
    B = np.zeros((len(omegas), n, n))
    X = np.full((len(omegas), len(headings), n), np.nan + 0j)
    for k, w in enumerate(omegas):
        for (i, j), v in freqs_A[w].items():
            A[k, i - 1, j - 1] = v
        for (i, j), v in freqs_B.get(w, {}).items():
            B[k, i - 1, j - 1] = v
        tab = exc_tables.get(w, {})
        for h_i, h in enumerate(headings):
            for i, v in tab.get(h, {}).items():
                X[k, h_i, i - 1] = v
    # WAMIT leaves out entries it considers negligible; a DOF never printed at
    # a frequency is zero, not missing.
    for k, w in enumerate(omegas):
        for h_i, h in enumerate(headings):
            if h in exc_tables.get(w, {}):
                X[k, h_i] = np.where(np.isnan(X[k, h_i]), 0.0, X[k, h_i])
    return np.array(omegas), A, B, X


def _wamit_numeric_tables(stem, source):
    """(A, B, X) by frequency from WAMIT's numeric files ``stem.1`` and ``stem.3`` (or ``.2``)."""
    f1 = stem.with_suffix(".1")
    if not f1.exists():
        raise DataFileNotFoundError(f1)
    fA, fB = {}, {}
    # Rows have 4 columns at PER <= 0 (no damping) and 5 otherwise.
    data = [[float(v.replace("D", "E")) for v in ln.split()] for ln in f1.read_text().splitlines() if ln.strip()]
    for row in data:
        per, i, j, a = row[0], int(row[1]), int(row[2]), row[3]
        w = math.inf if per == 0 else (0.0 if per < 0 else _TWO_PI / per)
        fA.setdefault(w, {})[(i, j)] = a
        if len(row) > 4 and 0 < w < math.inf:
            fB.setdefault(w, {})[(i, j)] = row[4]
    f3 = stem.with_suffix(".3")
    if not f3.exists():
        f3 = stem.with_suffix(".2")
    if not f3.exists():
        raise HydroDataError(source, "excitation", f"neither {stem}.3 nor {stem}.2 found")
    fX = {}
    for row in np.loadtxt(f3, ndmin=2):
        w = _TWO_PI / row[0]
        fX.setdefault(w, {}).setdefault(float(row[1]), {})[int(row[2])] = row[5] + 1j * row[6]
    return fA, fB, fX


def _wamit_out_tables(freqs, source):
    """(A, B, X) by frequency from the tables of a WAMIT ``.out`` file (diffraction excitation, else Haskind)."""
    fA = {w: d["A"] for w, d in freqs.items()}
    fB = {w: d["B"] for w, d in freqs.items()}
    fX = {}
    for w, d in freqs.items():
        tabs = d["exc"]
        if "diffraction" in tabs:
            fX[w] = tabs["diffraction"]
        elif "haskind" in tabs:
            fX[w] = tabs["haskind"]
    if not fA:
        raise HydroDataError(source, "added_mass", "no ADDED-MASS tables found")
    return fA, fB, fX


def _wamit_hydrostatics(source, stem, bodies, n):
    """Nondimensional hydrostatic stiffness (n, n): from ``stem.hst`` when there is one, else the
    ``.out`` file's per-body heave-roll-pitch block, else zero (with a warning)."""
    C = np.zeros((n, n))
    if stem is not None and stem.with_suffix(".hst").exists():
        for row in np.loadtxt(stem.with_suffix(".hst"), ndmin=2):
            C[int(row[0]) - 1, int(row[1]) - 1] = row[2]
    elif bodies:
        for b, body in enumerate(bodies):
            o = 6 * b
            c33, c34, c35 = body.get("c3", [0, 0, 0])
            c44, c45, c46 = body.get("c4", [0, 0, 0])
            c55, c56 = body.get("c5", [0, 0])
            blk = np.zeros((6, 6))
            blk[2, 2], blk[2, 3], blk[2, 4] = c33, c34, c35
            blk[3, 3], blk[3, 4], blk[3, 5] = c44, c45, c46
            blk[4, 4], blk[4, 5] = c55, c56
            # WAMIT prints the upper triangle of the symmetric heave-roll-pitch
            # block; C(4,6) and C(5,6) (from the centre of gravity) have no
            # symmetric partner.
            blk[3, 2], blk[4, 2], blk[4, 3] = c34, c35, c45
            C[o : o + 6, o : o + 6] = blk
    else:
        warnings.warn(f"{source}: no hydrostatics found; hydrostatic_stiffness set to zero", stacklevel=3)
    return C


def read_wamit(path, rho: float = 1000.0, g: float = 9.81, length: float = 1.0, *, omega_max=None,
               symmetry_rtol: float = 0.5, damping_rtol: float = 0.02) -> HydroData:
    """Read WAMIT output into dimensional :class:`HydroData` (Capytaine phase convention).

    ``path``: a ``.out`` file, or a stem (``rm3`` or ``rm3.1`` etc.) whose
    numeric files ``stem.1`` (added mass, damping; columns PER I J Ā B̄),
    ``stem.3`` (diffraction excitation; PER BETA I Mod Pha Re Im; ``stem.2``,
    Haskind, if there is no .3) and ``stem.hst`` (I J C̄) are read; ``stem.out``
    supplies body names, reference points, volumes and centres of buoyancy
    when it exists. PER is the period in s; PER = 0 is ω = ∞ (A(∞)), PER < 0
    is ω = 0 (dropped).

    Dimensionalisation (WAMIT's nondimensional form, ρ, g, length L as given,
    since .out/.1 files do not store ρ; WAMIT prints L as "Length scale"):
    A = Ā ρ L^k, B = B̄ ρ ω L^k with k = 3 / 4 / 5 for translation-translation /
    mixed / rotation-rotation; F = X̄ ρ g L^m with m = 2 / 3 for force / moment;
    C = C̄ ρ g L^m with m = 2 / 3 / 4.

    Phase: WAMIT's time factor is e^{+iωt} and its incident wave
    Re(e^{i(ωt − k x')}) is the same wave (crest at the origin at t = 0, same
    direction angle) as Capytaine's Re(e^{i(kx' − ωt)}), so F̂_capytaine =
    conj(X̄_wamit) ρ g L^m. (Checked against the Capytaine run of RM3 in
    tests/test_bem.py.) Reference points are the body origins XBODY, YBODY,
    ZBODY; centres of buoyancy are WAMIT's (body frame) plus that origin.
    """
    path = Path(path)
    source = str(path)
    if path.suffix == ".out":
        out = path
        stem = path.with_suffix("")
        numeric = False
    else:
        stem = path.with_suffix("") if path.suffix in (".1", ".2", ".3", ".hst") else path
        out = stem.with_suffix(".out") if stem.with_suffix(".out").exists() else None
        numeric = True
        source = str(stem)
    if not numeric and not out.exists():
        raise DataFileNotFoundError(out)

    bodies, gdf_names, freqs, g_file = ([], [], {}, None)
    if out is not None:
        bodies, gdf_names, freqs, g_file = _parse_wamit_out(out)

    fA, fB, fX = _wamit_numeric_tables(stem, source) if numeric else _wamit_out_tables(freqs, source)
    n = int(max(max(i, j) for d in fA.values() for (i, j) in d))
    if n % 6:
        raise HydroDataError(source, "added_mass", f"{n} DOFs is not 6 per body (generalised modes unsupported)")
    nb = n // 6
    if g_file is not None and abs(g_file - g) > 1e-6 * g:
        warnings.warn(f"{source}: file says g = {g_file}, dimensionalising with g = {g}", stacklevel=2)

    headings = sorted({h for tab in fX.values() for h in tab})
    if not headings:
        raise HydroDataError(source, "excitation", "no excitation tables found")
    omega, A, B, X = _assemble_wamit(source, fA, fB, fX, n, headings)
    if omega_max is not None:
        keep = omega <= omega_max
        omega, A, B, X = omega[keep], A[keep], B[keep], X[keep]
    mass, force, stiff = _wamit_scales(n, rho, g, length)
    A = A * mass
    B = B * mass * omega[:, None, None]
    exc = np.conj(X) * force
    if math.inf in fA:
        A_inf = np.zeros((n, n))
        for (i, j), v in fA[math.inf].items():
            A_inf[i - 1, j - 1] = v
        A_inf = A_inf * mass
    else:
        A_inf = _added_mass_inf_ogilvie(omega, A, B)
        warnings.warn(f"{source}: no zero-period (infinite-frequency) entry; A(inf) estimated by Ogilvie's relation",
                      stacklevel=2)

    C = _wamit_hydrostatics(source, stem if numeric else None, bodies, n)
    C = C * stiff

    if len(bodies) == nb:
        ref = np.array([b.get("ref", [0, 0, 0]) for b in bodies], dtype=float) * length
        cob = np.array([b.get("cob", [np.nan] * 3) for b in bodies], dtype=float) * length + ref
        vol = np.array([np.mean(b.get("vol", [np.nan])) for b in bodies], dtype=float) * length**3
        com = np.array([b.get("cog", [np.nan] * 3) for b in bodies], dtype=float) * length + ref
        mass = _wamit_mass_matrix(bodies, vol, com - ref, rho, length)
    else:
        com, mass = None, None
        ref = np.zeros((nb, 3))
        cob = np.full((nb, 3), np.nan)
        vol = np.full(nb, np.nan)
    names = tuple(gdf_names) if len(gdf_names) == nb and len(set(gdf_names)) == nb else tuple(
        f"body{b}" for b in range(nb)
    )
    beta = np.deg2rad(np.array(headings, dtype=float))
    return _checked_hydro(
        source, omega, A, B, A_inf, exc, beta, C, vol, cob, ref, rho, g,
        math.inf if out is None else _wamit_depth(out), names,
        symmetry_rtol=symmetry_rtol, damping_rtol=damping_rtol, mass=mass, com=com,
    )


def _wamit_mass_matrix(bodies, vol, cog_rel, rho, length):
    """The mass matrix a WAMIT run was given, about each body's origin: mass ρ V (WAMIT's bodies
    float freely), the centre of gravity, and the inertia from the radii of gyration r_ij about the
    origin (I_ij = m r_ij |r_ij|, WAMIT's convention).  NaN for a body whose radii are all zero (the
    run was not given them) or whose volume is unknown."""
    nb = len(bodies)
    M = np.full((6 * nb, 6 * nb), np.nan)
    for k, b in enumerate(bodies):
        r = np.asarray(b.get("gyration", []), float) * length
        if r.shape != (3, 3) or not np.any(r) or not np.isfinite(vol[k]):
            continue
        m = rho * vol[k]
        c = np.nan_to_num(cog_rel[k])
        ch = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        blk = np.zeros((6, 6))
        blk[:3, :3] = m * np.eye(3)
        blk[:3, 3:] = -m * ch
        blk[3:, :3] = m * ch
        blk[3:, 3:] = m * r * np.abs(r)
        M[6 * k : 6 * k + 6] = 0.0
        M[6 * k : 6 * k + 6, 6 * k : 6 * k + 6] = blk
    return M


def _wamit_depth(out):
    for line in Path(out).read_text(errors="replace").splitlines()[:2000]:
        s = line.strip()
        if s.startswith("Water depth:"):
            rest = s.split(":", 1)[1]
            if "infinite" in rest.lower():
                return math.inf
            v = _floats(rest)
            if v:
                return v[0]
    return math.inf


