"""jaxmbd.optim: objectives, gradients through the simulation, and tuning loops for jaxmbd.

    from jaxmbd.optim import objectives as obj
    from jaxmbd.optim import Parameter, ParameterSet, Problem, tune

See ``studies/tuning`` for the controller-tuning and design studies, and
:func:`tune_from_file` for the ``jaxmbd tune SYSTEM.toml`` entry point.
"""

from . import objectives
from .from_file import tune_from_file
from .gradcheck import check_gradients, gradient_cost, peak_memory
from .params import Parameter, ParameterSet, get_leaf, set_leaf
from .rollout import LazyOutputs, Problem, equilibrate, outputs_of, rollout, time_grid
from .tuning import FORWARD_MODE_MAX_PARAMETERS, TuneResult, gradient_mode_for, tune, value_and_grad

__all__ = [
    "objectives", "Parameter", "ParameterSet", "get_leaf", "set_leaf", "Problem", "equilibrate", "outputs_of", "LazyOutputs",
    "rollout", "time_grid", "TuneResult", "tune", "value_and_grad", "gradient_mode_for",
    "FORWARD_MODE_MAX_PARAMETERS", "check_gradients", "gradient_cost",
    "peak_memory", "tune_from_file",
]
