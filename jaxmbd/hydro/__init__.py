"""Hydrodynamics: waves, BEM coefficients (Capytaine / WAMIT), radiation memory, RAOs.

Conventions: SI units, z up, wave direction β = direction of travel from +x
towards +y, time dependence e^{-iωt} (Capytaine's), DOF order surge, sway,
heave, roll, pitch, yaw per body. See docs/hydro.md.
"""

from jaxmbd.hydro.bem import (
    HydroData,
    HydroDataError,
    box,
    cylinder,
    make_test_barge,
    read_capytaine,
    read_wamit,
    run_capytaine,
    test_barge_path,
)
from jaxmbd.hydro.body import HydroBody
from jaxmbd.hydro.capytaine_run import capytaine_drift
from jaxmbd.hydro.drift import DriftTable, WaveDrift, read_drift
from jaxmbd.hydro.frequency_domain import rao
from jaxmbd.hydro.radiation import (
    RadiationFitReport,
    RadiationStateSpace,
    fit_radiation,
    retardation_function,
)
from jaxmbd.hydro.rao_motion import RaoMotion, RaoTable, read_rao, write_rao_csv
from jaxmbd.hydro.sea import SeaState
from jaxmbd.hydro.spectra import Torsethaugen
from jaxmbd.hydro.waves import (
    JONSWAP,
    OchiHubble,
    PiersonMoskowitz,
    RecordedWave,
    RegularWave,
    TabulatedSpectrum,
    WaveComponents,
    complex_amplitudes,
    elevation,
    realise,
    spreading_function,
    spreading_weights,
    wavenumber,
)

__all__ = [
    "JONSWAP",
    "OchiHubble",
    "PiersonMoskowitz",
    "RecordedWave",
    "RegularWave",
    "TabulatedSpectrum",
    "Torsethaugen",
    "RaoMotion",
    "RaoTable",
    "read_rao",
    "DriftTable",
    "WaveDrift",
    "read_drift",
    "capytaine_drift",
    "write_rao_csv",
    "WaveComponents",
    "complex_amplitudes",
    "elevation",
    "realise",
    "spreading_function",
    "spreading_weights",
    "wavenumber",
    "HydroData",
    "HydroDataError",
    "box",
    "cylinder",
    "make_test_barge",
    "read_capytaine",
    "read_wamit",
    "run_capytaine",
    "test_barge_path",
    "RadiationFitReport",
    "RadiationStateSpace",
    "fit_radiation",
    "retardation_function",
    "rao",
    "HydroBody",
    "SeaState",
]
