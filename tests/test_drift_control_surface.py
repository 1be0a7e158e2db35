"""Mean wave drift through a control surface round each body (``capytaine_drift(..., method="control_surface")``)
against the far-field (Maruo) formula on Kochin functions: one floating box, and two boxes whose drifts sum to the
group's far field; the bad inputs in one line."""

import warnings

import numpy as np
import pytest

from jaxmbd.errors import InputError

RHO, G = 1025.0, 9.81


def _boxes():
    from jaxmbd.hydro.capytaine_run import box

    return [box(12.0, 6.0, 3.0, panel_size=1.0, center=(-12.0, 2.0), name="a"),
            box(12.0, 6.0, 3.0, panel_size=1.0, center=(12.0, -3.0), name="b")]


@pytest.mark.slow  # 26 s of Capytaine
def test_the_control_surface_drift_of_a_floating_box_equals_the_far_field():
    """A 20 x 10 x 4 m box, free on its RAOs and held, in head and 45 deg seas at 0.9, 1.6 and 2.5 rad/s (kd 0.33 to
    2.5): surge, sway and yaw through cylinders of two radii (the default, 17.2 m, and 30 m) within 1 % of the far
    field's (each component against its largest value over the table; measured at most 0.2 %, yaw included).  Both read the same
    source distribution, one through the fluid at a finite distance and one from the waves' asymptotic form: the
    check is of the two momentum balances and their quadratures, and that the flux does not depend on the surface."""
    from jaxmbd.hydro.capytaine_run import box, capytaine_drift

    omegas, heads = [0.9, 1.6, 2.5], np.radians([0.0, 45.0])
    for fixed in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            far = np.asarray(capytaine_drift(box(20.0, 10.0, 4.0, panel_size=1.0), omegas=omegas, wave_directions=heads, fixed=fixed).values)
            for radius in (None, 30.0):
                near = np.asarray(capytaine_drift(box(20.0, 10.0, 4.0, panel_size=1.0), omegas=omegas, wave_directions=heads, fixed=fixed,
                                                  method="control_surface", control_radius=radius).values)
                scale = np.max(np.abs(far), axis=(0, 1))
                assert np.all(np.abs(near - far) <= 1e-2 * scale), (fixed, radius, near, far)
    assert far[1, 0, 0] > 0.1 * RHO * G * 10.0  # the check is not of small numbers: 1.6 rad/s head seas push the 10 m beam


@pytest.mark.slow  # 6 s of Capytaine
def test_two_boxes_drifts_sum_to_the_groups_far_field():
    """Two 12 x 6 x 3 m boxes 24 m apart, both free on their coupled RAOs, in head and 60 deg seas at 0.8 and 1.3
    rad/s: each box's drift through its own cylinder, summed (the yaw moved to the origin), equals the far-field
    formula of the pair (which sees only their sum) within 1 % of each component's largest value (measured 0.7 %
    in yaw, 0.1 % in surge and sway).  Each box's own drift is not the isolated box's: at 1.3 rad/s in head seas
    the box up-wave is pushed 35 % less than alone (the other's reflected waves), which the far field cannot tell."""
    import capytaine as cpt
    import xarray as xr

    from jaxmbd.hydro.capytaine_run import capytaine_drift

    omegas, heads = [0.8, 1.3], np.radians([0.0, 60.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (np.asarray(t.values) for t in capytaine_drift(_boxes(), omegas=omegas, wave_directions=heads, method="control_surface"))
        alone = np.asarray(capytaine_drift(_boxes()[0], omegas=omegas, wave_directions=heads).values)
        parts = _boxes()
        for p in parts:
            p.inertia_matrix = p.compute_rigid_body_inertia(rho=RHO)
            p.hydrostatic_stiffness = p.compute_hydrostatic_stiffness(rho=RHO, g=G)
        pair = cpt.Multibody(parts)
        ds = xr.Dataset(coords={"omega": omegas, "wave_direction": heads, "radiating_dof": list(pair.dofs), "water_depth": [np.inf],
                                "rho": [RHO], "g": [G], "theta": 2 * np.pi / 360 * np.arange(-2, 363)})
        ds = cpt.BEMSolver().fill_dataset(ds, pair, hydrostatics=True, progress_bar=False)
        x = cpt.post_pro.rao(ds).transpose("omega", "wave_direction", "radiating_dof")
        d = cpt.post_pro.far_field_mean_drift_force(x, ds)
    far = np.stack([np.real(np.diagonal(d[v].values, axis1=1, axis2=2)) for v in ("drift_force_surge", "drift_force_sway", "drift_force_yaw")], -1)
    total = a + b
    total[..., 2] += (-12.0 * a[..., 1] - 2.0 * a[..., 0]) + (12.0 * b[..., 1] + 3.0 * b[..., 0])  # (c x F)_z of each centre
    assert np.all(np.abs(total - far) <= 1e-2 * np.max(np.abs(far), axis=(0, 1))), (total, far)
    assert 0 < a[1, 0, 0] < 0.8 * alone[1, 0, 0]


@pytest.mark.slow  # 3 s of Capytaine
def test_the_drift_does_not_depend_on_where_the_body_is():
    """The box moved 30 m along x and -20 m along y (its rotation centre with it) drifts as at the origin in both
    methods, the yaw about its rotation centre included (1e-6 of each component's largest value: the panels'
    influence depends on their relative positions only).  The far field takes its Kochin functions about the
    rotation centre: about the origin, their angular derivative carries the phase e^{-ik c (cos θ, sin θ)}, which
    its differences across 1° missed by 60 % of the yaw at 2 rad/s.  A list of one mesh is that body."""
    from jaxmbd.hydro.capytaine_run import box, capytaine_drift

    omegas, heads = [1.2, 2.0], np.radians([45.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("far_field", "control_surface"):
            here = np.asarray(capytaine_drift(box(20.0, 10.0, 4.0, panel_size=2.0), omegas=omegas, wave_directions=heads, method=method).values)
            there = np.asarray(capytaine_drift([box(20.0, 10.0, 4.0, panel_size=2.0, center=(30.0, -20.0))], omegas=omegas,
                                               wave_directions=heads, method=method).values)
            assert np.all(np.abs(there - here) <= 1e-6 * np.max(np.abs(here), axis=(0, 1))), (method, here, there)
            assert np.all(np.abs(here[..., 2]) > 1e3)  # a yaw moment to compare


def test_a_control_surface_that_cuts_a_body_or_reaches_another_is_one_line():
    from jaxmbd.hydro.capytaine_run import box, capytaine_drift

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match=r"control_radius 11.5 m cuts body 'b' or passes within 0.559 m of it \(its panels reach 11.2 m"):
            capytaine_drift(box(20.0, 10.0, 4.0, name="b"), omegas=[1.0, 1.2], wave_directions=[0.0], method="control_surface",
                            control_radius=11.5)
        with pytest.raises(InputError, match=r"body 'b' reaches 18.1 m from body 'a', within 0.335 m of its control surface of radius 18 m"):
            capytaine_drift(_boxes(), omegas=[1.0, 1.2], wave_directions=[0.0], method="control_surface", control_radius=18.0)
        with pytest.raises(InputError, match=r"one body for the far field .* method='control_surface' gives each body's drift"):
            capytaine_drift(_boxes(), omegas=[1.0, 1.2], wave_directions=[0.0])
        with pytest.raises(InputError, match=r"water_depth must be > 0 \(m, inf for deep water\), got -5"):
            capytaine_drift(_boxes()[0], omegas=[1.0, 1.2], wave_directions=[0.0], water_depth=-5.0)
        with pytest.raises(InputError, match=r"method is 'far_field' or 'control_surface', got 'near'"):
            capytaine_drift(_boxes()[0], omegas=[1.0, 1.2], wave_directions=[0.0], method="near")


def _bottom_mounted_pile(depth, rows, around=160):
    """The side of a vertical cylinder of radius 1 m from the free surface to the seabed (no bottom: it stands on it)."""
    import capytaine as cpt

    z, th = np.linspace(0.0, -depth, rows + 1), np.linspace(0.0, 2 * np.pi, around + 1)[:-1]
    vertices = np.concatenate([np.column_stack([np.cos(th), np.sin(th), np.full(around, zi)]) for zi in z])
    j = np.arange(around)
    faces = np.concatenate([np.stack([k * around + j, (k + 1) * around + j, (k + 1) * around + (j + 1) % around, k * around + (j + 1) % around], 1)
                            for k in range(rows)])
    return cpt.FloatingBody(mesh=cpt.Mesh(vertices, faces, name="pile"), dofs=cpt.rigid_body_dofs(rotation_center=(0, 0, 0)),
                            center_of_mass=(0, 0, -depth / 2), name="pile")


@pytest.mark.slow  # 40 s of Capytaine in finite depth
def test_the_far_field_in_water_of_finite_depth():
    """A fixed cylinder of radius 1 m standing on the seabed, ka = 2, in water from kh = 0.5 to pi: the far-field
    drift within 1 % of MacCamy and Fuchs' (the deep-water far-field drift at the same ka times 1 + 2kh/sinh 2kh, the
    finite-depth factor of the momentum flux; measured +0.6, +0.7, +0.5, +0.1 %; Capytaine's own finite-depth
    formula -51, -22, -3, -0.2 %).  A free and a held box 20 x 10 x 4 m in 10 m of water (kh 0.9 and 1.4): the power
    the waves lose to it, the linear term -c1 Im H(beta) of the formula against the quadratic c2 ∫|H|^2, balances
    (no damping but the waves') within 1 % (measured 0.4 %, as in deep water: the panels); this checks the ratio of
    the two coefficients and the radiated waves' Kochin functions in finite depth.  In deep water the formula is
    Capytaine's to round-off.  The control surface in finite depth is refused in one line."""
    import capytaine as cpt
    import xarray as xr
    from test_wave_drift import havelock_drift

    from jaxmbd.hydro.capytaine_run import box, capytaine_drift
    from jaxmbd.hydro.control_surface import symmetric_radiation
    from jaxmbd.hydro.far_field import depth_coefficients, far_field_drift

    k = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kh in (0.5, 1.0, 2.0, np.pi):
            h = kh / k
            w = np.sqrt(9.81 * k * np.tanh(kh))
            got = np.asarray(capytaine_drift(_bottom_mounted_pile(h, 15), omegas=[w, 1.01 * w], wave_directions=[0.0],
                                             fixed=True, water_depth=h).values)[0, 0, 0]
            assert got == pytest.approx(havelock_drift(2.0) * (1 + 2 * kh / np.sinh(2 * kh)), rel=1e-2), kh

        b = box(20.0, 10.0, 4.0, panel_size=1.0, name="b")
        b.inertia_matrix = b.compute_rigid_body_inertia(rho=1025.0)
        b.hydrostatic_stiffness = b.compute_hydrostatic_stiffness(rho=1025.0, g=9.81)
        om, heads, theta = np.array([0.8, 1.1]), np.radians([0.0, 60.0]), np.radians(np.arange(-2.0, 363.0))
        for depth in (10.0, np.inf):
            ds = xr.Dataset(coords={"omega": om, "wave_direction": heads, "radiating_dof": list(b.dofs), "water_depth": [depth],
                                    "rho": [1025.0], "g": [9.81], "theta": theta})
            ds = cpt.BEMSolver().fill_dataset(ds, b, hydrostatics=True, progress_bar=False)
            k_w = ds["wavenumber"]
            k_w = np.asarray(k_w.isel({d: 0 for d in k_w.dims if d != "omega"}).values, float)
            c1, c2 = depth_coefficients(om, k_w, depth, 1025.0)
            rao = cpt.post_pro.rao(symmetric_radiation(ds)).transpose("omega", "wave_direction", "radiating_dof")
            for X, rows in ((0.0 * rao, slice(None)), (rao, slice(1, 2))):  # free: where its drift is not a near-cancellation
                H = 1j * (ds["kochin_diffraction"] + (ds["kochin_radiation"] * X).sum("radiating_dof"))
                H = H.isel({d: 0 for d in H.dims if d not in ("omega", "wave_direction", "theta")})
                H = H.transpose("omega", "wave_direction", "theta").values
                whole = (theta >= 0) & (theta <= 2 * np.pi)
                for j, beta in enumerate(heads):
                    lin = -c1 * np.array([np.interp(beta, theta, x.imag) for x in H[:, j]])
                    quad = c2 * np.trapezoid(np.abs(H[:, j][:, whole]) ** 2, theta[whole], axis=-1)
                    np.testing.assert_allclose(lin[rows], quad[rows], rtol=1e-2)
                if depth == np.inf:
                    ref = cpt.post_pro.far_field_mean_drift_force(X, ds)
                    ref = np.stack([np.real(np.diagonal(ref[v].values, axis1=1, axis2=2))
                                    for v in ("drift_force_surge", "drift_force_sway", "drift_force_yaw")], axis=-1)
                    mine = far_field_drift(H, theta, heads, om, k_w, depth, 1025.0)
                    np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        with pytest.raises(InputError, match=r"water_depth 1.5708 m: the control surface in deep water only"):
            capytaine_drift(_bottom_mounted_pile(np.pi / 2, 15), omegas=[2.0], wave_directions=[0.0], fixed=True, water_depth=np.pi / 2,
                            method="control_surface")


@pytest.mark.slow  # 20 s of Capytaine
def test_the_far_fields_headings_in_any_order_and_its_yaw_about_another_point():
    """Headings given out of order, or below zero, land on their own rows (Capytaine returns its headings sorted):
    a held box's table is the same for [pi/4, 0] as for [0, pi/4] (1e-9), and in head seas given as [-pi/2, 0] its
    sway and yaw vanish by symmetry (1e-6 of the surge).  In 10 m of water (kh 0.9-1.4) the yaw about the origin of
    a box centred at c = (3, 2) m equals its yaw about c plus c x F (1e-3; measured 2e-5, the c x F term 2-20 % of
    the yaw): the finite-depth coefficients scale the moment as they do the forces (which agree to 1e-5)."""
    from jaxmbd.hydro.capytaine_run import box, capytaine_drift

    w = [0.8, 1.1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = capytaine_drift(box(12.0, 6.0, 3.0, panel_size=1.0), omegas=w, wave_directions=[np.pi / 4, 0.0], fixed=True)
        b = capytaine_drift(box(12.0, 6.0, 3.0, panel_size=1.0), omegas=w, wave_directions=[0.0, np.pi / 4], fixed=True)
        np.testing.assert_allclose(np.asarray(a.values), np.asarray(b.values), rtol=0, atol=1e-9 * np.abs(np.asarray(b.values)).max())
        np.testing.assert_allclose(np.asarray(a.heading), [0.0, np.pi / 4], atol=1e-12)
        c = capytaine_drift(box(12.0, 6.0, 3.0, panel_size=1.0), omegas=w, wave_directions=[-np.pi / 2, 0.0], fixed=True)
        head = np.asarray(c.values)[:, list(np.round(np.asarray(c.heading), 9)).index(0.0)]
        assert np.all(np.abs(head[:, 1:]) < 1e-6 * np.abs(head[:, :1])), head

        cx, cy = 3.0, 2.0
        about = {rc: np.asarray(capytaine_drift(box(12.0, 6.0, 3.0, panel_size=1.0, center=(cx, cy), rotation_center=rc), omegas=w,
                                                wave_directions=[np.pi / 6], fixed=True, water_depth=10.0).values)[:, 0]
                 for rc in ((0.0, 0.0, 0.0), (cx, cy, 0.0))}
    at_c, at_0 = about[(cx, cy, 0.0)], about[(0.0, 0.0, 0.0)]
    np.testing.assert_allclose(at_0[:, :2], at_c[:, :2], rtol=1e-4)  # the forces do not depend on the point
    np.testing.assert_allclose(at_0[:, 2], at_c[:, 2] + cx * at_c[:, 1] - cy * at_c[:, 0], rtol=1e-3)
