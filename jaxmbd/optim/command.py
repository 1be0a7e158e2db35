"""``jaxmbd tune SYSTEM.toml``: the command line of :func:`jaxmbd.optim.from_file.tune_from_file`."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub, load, *, out, count):
    """The command's options; ``load(path)`` reads the system file as the command line does (one-line errors)."""
    tu = sub.add_parser("tune", help="tune the parameters named in the file's [tune] table with gradients: of a run's "
                                     "outputs, or of the operation's workability or limiting Hs")
    tu.add_argument("system", help="the system file (TOML) with a [tune] table")
    tu.add_argument("--out", type=out, help="output folder (default out/<name>_tune)")
    tu.add_argument("--steps", type=count, help="optimiser iterations (default: the file's [tune])")
    tu.add_argument("--smoke", action="store_true", help="two iterations on a short run: checks the table")
    tu.set_defaults(func=lambda args: command(args, load(args.system)))
    return tu


def command(args, loaded) -> int:
    from .from_file import tune_from_file

    if not (loaded.config or {}).get("tune"):
        print(f"jaxmbd: {args.system}: tune: expected a [tune] table (parameters, objective, realisations); "
              "see jaxmbd/optim/from_file.py", file=sys.stderr)
        return 2
    out = Path(args.out or f"out/{loaded.system.name}_tune")
    res = tune_from_file(loaded, out, steps=args.steps, smoke=args.smoke)
    held = res.attrs.get("held_out") if hasattr(res, "attrs") else None
    if held:
        print(f"held-out objective: before {held['objective_before']:.4g}, after {held['objective_after']:.4g} "
              f"({100 * held['improvement']:.1f} % lower)")
    print(f"wrote {out / 'tune.json'} and {out / 'tune_history.png'}")
    return 0
