"""How the tuned forward dynamics is evaluated: a static, hashable options object.

Every choice the tuned variants make that changes the compiled program (never its value beyond
rounding) is a field here, so a caller or a test picks a variant by passing options, not by
changing module state.  The defaults are what the benchmarks chose (benchmarks/NOTES.md).
"""

from __future__ import annotations

import dataclasses

from ..errors import InputError


@dataclasses.dataclass(frozen=True)
class DynamicsOptions:
    """Options of :func:`jaxmbd.dynamics.forward_dynamics` (static: part of the compiled program).

    scan_min_run:
        Serial runs of 1-DOF joints (all revolute or all prismatic, each body the only child of the
        one before) at least this long are walked by ``lax.scan`` in one frame
        (:mod:`jaxmbd.dynamics.serial_run`), so the compiled program keeps its size for any depth;
        shorter runs are unrolled with static axes, which is faster per evaluation.
    scan_unroll:
        Bodies a run's scans take per loop iteration.
    level_min_bodies:
        1-DOF bodies below a parent that share a depth in the tree are taken as one batch in each
        ABA pass when a depth has at least this many (a hull with hinged floats, slings on a hook).
    dense_max_nv:
        Trees with at most this many velocity DOFs (and no scanned run) are differentiated through
        the joint-space inertia (a custom JVP rule, :mod:`jaxmbd.dynamics.dense`) instead of through
        the recursion; the value is still the ABA's.  0 differentiates the recursion itself.
    """

    scan_min_run: int = 12
    scan_unroll: int = 4
    level_min_bodies: int = 2
    dense_max_nv: int = 16

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < (1 if f.name == "scan_unroll" else 0):
                raise InputError(f"DynamicsOptions.{f.name}: expected a non-negative integer, got {value!r}")


DEFAULT_OPTIONS = DynamicsOptions()

# Variants the contract tests and benchmarks name: each forces one route of the tuned ABA.
BODY_BY_BODY = DynamicsOptions(scan_min_run=10**9, level_min_bodies=10**9, dense_max_nv=0)
ALL_RUNS_SCANNED = DynamicsOptions(scan_min_run=2, dense_max_nv=0)
ALL_LEVELS_BATCHED = DynamicsOptions(scan_min_run=10**9, level_min_bodies=2, dense_max_nv=0)
