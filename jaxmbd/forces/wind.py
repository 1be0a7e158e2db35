"""Wind drag on a body (Hong et al. 2016, eq. 31), with the mean wind's height profile."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..fields import parameter, setting
from ..system import Context, Contribution, ForceElement
from .current_load import HullCurrentLoad, coefficient_contribution, coefficient_load

PROFILES = ("uniform", "power_law", "logarithmic")
GUSTS = ("none", "npd", "api", "kaimal")
"""The gust spectra: NPD (Frøya), API and Kaimal (:func:`gust_spectrum`)."""
API_PEAK = 0.025
"""a of the API spectrum's f_p = a U(z)/z (API RP 2A; DNV-RP-C205 allows 0.01 to 0.1)."""
GUST_FREQUENCIES = 200
"""Gust frequencies of a realisation: geometric bins from one an hour to 0.5 Hz (:data:`GUST_BAND_HZ`)."""
GUST_BAND_HZ = (1.0 / 3600.0, 0.5)


class WindDrag(ForceElement):
    """F = ½ ρ_air C_d S |V_r| V_r at ``point`` of ``body``, with V_r the horizontal wind velocity
    relative to the point (wind blowing towards ``direction`` rad, measured from +x towards +y, like the
    waves).  The wind's speed at the point's height z above the still water (world z) is ``speed`` at
    ``reference_height`` H scaled by the ``profile``: ``uniform`` (the same at every height), ``power_law``
    U(z) = U(H) (z/H)^α (``exponent`` α) or ``logarithmic`` U(z) = U(H) ln(z/z₀) / ln(H/z₀) (``roughness``
    z₀; DNV-RP-C205 gives both forms and their parameters for the open sea).  Outputs: ``force`` (3,) N,
    world axes; ``speed`` (m/s) the wind at the point (the mean, with the gust when there is one); ``height`` (m)
    the point above the still water.
    Range: a profile holds above the sea (z > z₀ for the logarithmic one; z > 0 for the power law); below
    it the speed is taken at that lowest height, and the run says so.  ``gust`` adds the along-wind gust of
    the NPD, API or Kaimal spectrum (:func:`gust_spectrum`; the profile's speeds taken as one-hour means)
    drawn with each wave realisation: one point's spectrum, the same phases for every wind element of
    the system (fully coherent over the structure, conservative for a large area), no lateral or vertical
    gust; its highest frequency (0.5 Hz) needs a step of at most about 0.25 s."""

    validity_doc: ClassVar[tuple] = (  # (entry, range, beyond it): the docs' validity table
        ('`wind` with a `profile`',
         "the wind's point above the still water (above `roughness` for the logarithmic profile)",
         'no mean wind profile below the sea surface: the speed is taken at the lowest height the profile holds'),
    )

    kind: ClassVar[str] = "wind"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="body the wind acts on")
    point: jnp.ndarray = parameter(unit="m", shape=(3,), doc="centre of wind pressure, body frame")
    area: jnp.ndarray = parameter(unit="m²", bound=(">=", 0.0), doc="projected area S")
    speed: jnp.ndarray = parameter(unit="m/s", bound=(">=", 0.0), doc="wind speed (at `reference_height` with a profile)")
    direction: jnp.ndarray = parameter(unit="rad", angle=True, default=0.0, doc="direction the wind blows towards, from +x towards +y")
    drag_coefficient: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=1.0, doc="C_d")
    air_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=1.225, doc="ρ_air")
    profile: str = setting("string", default="uniform", choices=PROFILES, doc="the mean wind over height: `uniform`, "
                           "`power_law` (U(H) (z/H)^α) or `logarithmic` (U(H) ln(z/z₀) / ln(H/z₀))")
    reference_height: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=10.0, doc="H, where `speed` is given")
    exponent: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=0.12, doc="α of the power law (0.12: open sea)")
    roughness: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=1.0e-4, doc="z₀ of the logarithmic profile (open sea)")
    gust: str = setting("string", default="none", choices=GUSTS, doc="the wind's gusts at the point's height, drawn with each "
                        "wave realisation: `npd` (Frøya), `api` or `kaimal` (with `turbulence_intensity`); `none`: the mean wind only")
    turbulence_intensity: jnp.ndarray = parameter(unit="", bound=(">", 0.0), default=0.1, doc="σ_u / U(z) of the Kaimal "
                                                  "spectrum (`gust = \"kaimal\"` only)")

    @property
    def gust_frequencies(self) -> int:
        return GUST_FREQUENCIES if self.gust != "none" else 0

    @classmethod
    def file_rules(cls, values, given, fail):
        profile_rules(values, given, fail)
        gust_rules(values, given, fail)

    def _lowest(self):
        return lowest_height(self)

    def _speed(self, z):
        return profile_speed(self, z)

    def force(self, ctx: Context):
        pos, vel = ctx.point(self.body, self.point)
        u = self._speed(pos[2]) + gust_speed(self, ctx, pos[2])
        wind = u * jnp.stack([jnp.cos(self.direction), jnp.sin(self.direction), 0.0 * u])
        vr = wind - vel * jnp.array([1.0, 1.0, 0.0], dtype=vel.dtype)
        mag = jnp.sqrt(jnp.sum(vr * vr) + 1e-12)
        return 0.5 * self.air_density * self.drag_coefficient * self.area * mag * vr

    def contribution(self, ctx: Context, z) -> Contribution:
        return Contribution(f_ext=ctx.add_point_force(ctx.zeros_f_ext(), self.body, self.point, self.force(ctx)))

    def output_units(self, model) -> dict:
        return {"force": "N", "speed": "m/s", "height": "m"}

    def outputs(self, ctx: Context, z) -> dict:
        pos, _ = ctx.point(self.body, self.point)
        return {"force": self.force(ctx), "speed": self._speed(pos[2]) + gust_speed(self, ctx, pos[2]), "height": pos[2]}

    def valid_ranges(self, model) -> tuple:
        return profile_range(self)


def profile_rules(values, given, fail):
    """A logarithmic profile's reference height above its roughness length (else its speed is infinite or negative)."""
    if values.get("profile") == "logarithmic" and float(values.get("reference_height", 10.0)) <= float(values.get("roughness", 1e-4)):
        fail("reference_height", f"must lie above the roughness length z₀ = {float(values.get('roughness', 1e-4)):g} m of the "
             "logarithmic profile")


def npd_spectrum(f, u10, z):
    """The NPD (Frøya) spectrum of the along-wind speed at height ``z`` (m) in a one-hour mean wind ``u10`` (m/s)
    at 10 m, one-sided, m²/s² per Hz at ``f`` (Hz) (DNV-RP-C205; ISO 19901-1):
    S(f) = 320 (U₁₀/10)² (z/10)^0.45 / (1 + f̃ⁿ)^(5/(3n)),  f̃ = 172 f (z/10)^(2/3) (U₁₀/10)^(−0.75),  n = 0.468."""
    n = 0.468
    ft = 172.0 * f * (z / 10.0) ** (2.0 / 3.0) * (u10 / 10.0) ** -0.75
    return 320.0 * (u10 / 10.0) ** 2 * (z / 10.0) ** 0.45 / (1.0 + ft**n) ** (5.0 / (3.0 * n))


def api_spectrum(f, uz, z):
    """The API spectrum of the along-wind speed at height ``z`` (m) in a one-hour mean wind ``uz`` (m/s) there,
    one-sided, m²/s² per Hz (API RP 2A; DNV-RP-C205 2.3.5): S(f) = σ² / (f_p (1 + 1.5 f/f_p)^(5/3)), f_p = a U(z)/z
    (a = :data:`API_PEAK`), σ = I(z) U(z), I(z) = 0.15 (z/20)^−0.125 up to 20 m and 0.15 (z/20)^−0.275 above; its
    integral over all f is σ²."""
    fp = API_PEAK * uz / z
    intensity = 0.15 * jnp.where(z <= 20.0, (z / 20.0) ** -0.125, (z / 20.0) ** -0.275)
    return (intensity * uz) ** 2 / (fp * (1.0 + 1.5 * f / fp) ** (5.0 / 3.0))


def kaimal_spectrum(f, uz, z, intensity):
    """The Kaimal spectrum of the along-wind speed at height ``z`` (m) in a mean wind ``uz`` (m/s) there with
    turbulence ``intensity`` I, one-sided, m²/s² per Hz (IEC 61400-1): S(f) = σ² (4 L/U) / (1 + 6 f L/U)^(5/3),
    σ = I U, L = 8.1 Λ, Λ = 0.7 z up to 60 m and 42 m above; its integral over all f is σ²."""
    length = 8.1 * jnp.where(z <= 60.0, 0.7 * z, 42.0)
    return (intensity * uz) ** 2 * 4.0 * length / uz / (1.0 + 6.0 * f * length / uz) ** (5.0 / 3.0)


def gust_spectrum(kind: str, f, u10, uz, z, intensity=0.1):
    """S(f) (m²/s² per Hz) of the gust ``kind`` (``npd``, ``api``, ``kaimal``) at height ``z`` (m), with the one-hour
    mean wind ``u10`` at 10 m (NPD's parameter) and ``uz`` at z (API's and Kaimal's)."""
    if kind == "npd":
        return npd_spectrum(f, u10, z)
    if kind == "api":
        return api_spectrum(f, uz, z)
    return kaimal_spectrum(f, uz, z, intensity)


def gust_components(u10, z, n: int = GUST_FREQUENCIES, kind: str = "npd", uz=None, intensity=0.1):
    """(frequencies Hz, amplitudes m/s) of ``n`` gust components over geometric bins of :data:`GUST_BAND_HZ`:
    a_j = √(2 S(f_j) Δf_j) at each bin's geometric centre, so Σ a_j²/2 is the band's variance (:func:`gust_spectrum`;
    ``uz``: the mean wind at z, default ``u10``)."""
    edges = np.geomspace(*GUST_BAND_HZ, n + 1)
    f = np.sqrt(edges[:-1] * edges[1:])
    s = gust_spectrum(kind, jnp.asarray(f), u10, u10 if uz is None else uz, z, intensity)
    return f, jnp.sqrt(2.0 * s * jnp.asarray(np.diff(edges)))


def gust_rules(values, given, fail):
    """``turbulence_intensity`` belongs to the Kaimal spectrum."""
    if "turbulence_intensity" in given and values.get("gust", "none") != "kaimal":
        fail("turbulence_intensity", "the Kaimal spectrum's; give gust = \"kaimal\" or leave it out")


def gust_speed(el, ctx: Context, z):
    """The gust (m/s) of ``el``'s wind at height ``z`` at the context's time: Σ a_j cos(2π f_j t + φ_j) with the
    realisation's phases (0 without gusts or without a realisation); U₁₀ from the element's profile at 10 m,
    z at least 1 m."""
    phases = None if ctx.waves is None else getattr(ctx.waves, "gust_phase", None)
    if el.gust == "none" or phases is None:
        return 0.0
    z = jnp.maximum(z, 1.0)
    f, a = gust_components(profile_speed(el, 10.0), z, phases.shape[-1], el.gust, profile_speed(el, z), el.turbulence_intensity)
    return jnp.sum(a * jnp.cos(2.0 * jnp.pi * jnp.asarray(f) * ctx.t + phases))


def lowest_height(el):
    """The lowest height (m) the wind profile of ``el`` holds at: z₀ (logarithmic), 1 mm (power law), -inf (uniform)."""
    return {"uniform": -jnp.inf, "power_law": 1e-3, "logarithmic": el.roughness}[el.profile]


def profile_speed(el, z):
    """The mean wind speed (m/s) at height ``z`` (m, above the still water) of ``el``'s profile (``speed`` at
    ``reference_height``); below the lowest height the profile holds, that height's."""
    z = jnp.maximum(z, lowest_height(el))
    H = el.reference_height
    if el.profile == "power_law":
        return el.speed * (z / H) ** el.exponent
    if el.profile == "logarithmic":
        return el.speed * jnp.log(z / el.roughness) / jnp.log(H / el.roughness)
    return el.speed * jnp.ones_like(z)


def profile_range(el) -> tuple:
    """The range of ``el``'s profile: its point above the lowest height it holds at (none for a uniform wind)."""
    if el.profile == "uniform":
        return ()
    from ..validity import ValidRange

    lowest = float(lowest_height(el))
    return (ValidRange("height", "height of the wind's point", f"a {el.profile.replace('_', ' ')} wind profile",
                       f"height >= {lowest:g} m above the still water", lower=lowest),)


class HullWindLoad(ForceElement):
    """The wind on a hull's superstructure or on a lifted object (a module, a blade, a jacket), from the user's
    coefficients over the wind's angle of attack, in the form of the hull current load
    (:class:`~jaxmbd.forces.current_load.HullCurrentLoad`; OCIMF's for tankers; wind-tunnel or CFD data of the object):

        F_x = ½ ρ_a C_x(α) A_x |U|²,   F_y = ½ ρ_a C_y(α) A_y |U|²,   M_z = ½ ρ_a C_n(α) A_y L |U|²,

    in the body's axes at ``point`` (the centre of the areas, where the moment is taken), U the wind at the
    point's height (the profile of :class:`WindDrag`: ``speed`` at ``reference_height``, towards ``direction``)
    less the point's horizontal velocity, α = atan2(U_y, U_x) in the body's axes (0: the wind travels along
    +x, from astern); the coefficients linear between the rows of ``angles_deg`` (−180° to 180°, periodic).
    The yaw moment is what turns a lifted module on its sling (the taglines' load).  Outputs: ``force``
    (3,) N (world axes), ``moment`` N m, ``angle`` rad (α), ``speed`` m/s (the wind at the point, with its gust),
    ``height`` m.  Range: the profile's (the point above the sea)."""

    validity_doc: ClassVar[tuple] = (('`wind_coefficients` with a `profile`', "the point above the still water (above "
                                      "`roughness` for the logarithmic profile)", "as `wind`: the speed taken at the lowest "
                                      "height the profile holds"),)

    kind: ClassVar[str] = "wind_coefficients"

    name: str = eqx.field(static=True)
    body: str = setting("body", doc="the hull or the lifted object")
    angles: jnp.ndarray = parameter(unit="rad", shape=None, angle=True, doc="α of the table's rows, −180° to 180°, increasing")
    Cx: jnp.ndarray = parameter(unit="", shape=None, doc="C_x(α), surge force coefficient, one per angle")
    Cy: jnp.ndarray = parameter(unit="", shape=None, doc="C_y(α), sway force coefficient, one per angle")
    Cn: jnp.ndarray = parameter(unit="", shape=None, doc="C_n(α), yaw moment coefficient, one per angle")
    area_x: jnp.ndarray = parameter(unit="m²", bound=(">", 0.0), doc="A_x, area above the water seen from ahead")
    area_y: jnp.ndarray = parameter(unit="m²", bound=(">", 0.0), doc="A_y, area above the water seen from the side")
    length: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), doc="L, the moment's length")
    speed: jnp.ndarray = parameter(unit="m/s", bound=(">=", 0.0), doc="wind speed at `reference_height` (uniform: everywhere)")
    point: jnp.ndarray = parameter(unit="m", shape=(3,), default=(0.0, 0.0, 0.0), doc="centre of the areas (the moment's point), body frame")
    direction: jnp.ndarray = parameter(unit="rad", angle=True, default=0.0, doc="direction the wind blows towards, from +x towards +y")
    air_density: jnp.ndarray = parameter(unit="kg/m³", bound=(">", 0.0), default=1.225, doc="ρ_air")
    profile: str = setting("string", default="uniform", choices=PROFILES, doc="as `wind`'s")
    reference_height: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=10.0, doc="H, where `speed` is given")
    exponent: jnp.ndarray = parameter(unit="", bound=(">=", 0.0), default=0.12, doc="α of the power law")
    roughness: jnp.ndarray = parameter(unit="m", bound=(">", 0.0), default=1.0e-4, doc="z₀ of the logarithmic profile")
    gust: str = setting("string", default="none", choices=GUSTS, doc="as `wind`'s")
    turbulence_intensity: jnp.ndarray = parameter(unit="", bound=(">", 0.0), default=0.1, doc="as `wind`'s")

    @property
    def gust_frequencies(self) -> int:
        return GUST_FREQUENCIES if self.gust != "none" else 0

    @classmethod
    def file_rules(cls, values, given, fail):
        HullCurrentLoad.file_rules(values, given, fail)
        profile_rules(values, given, fail)
        gust_rules(values, given, fail)

    def _load(self, ctx: Context):
        pos, _ = ctx.point(self.body, self.point)
        u = profile_speed(self, pos[2]) + gust_speed(self, ctx, pos[2])
        wind = u * jnp.stack([jnp.cos(self.direction), jnp.sin(self.direction), 0.0 * u]).astype(ctx.p.dtype)
        return coefficient_load(self, ctx, wind, self.air_density) + (u, pos[2])

    def contribution(self, ctx: Context, z) -> Contribution:
        return coefficient_contribution(ctx, *self._load(ctx)[:4])

    def outputs(self, ctx: Context, z) -> dict:
        _, _, F, mz, alpha, u, height = self._load(ctx)
        return {"force": F, "moment": mz, "angle": alpha, "speed": u, "height": height}

    def output_units(self, model) -> dict:
        return {"force": "N", "moment": "N m", "angle": "rad", "speed": "m/s", "height": "m"}

    def valid_ranges(self, model) -> tuple:
        return profile_range(self)
