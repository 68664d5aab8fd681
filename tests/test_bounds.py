"""Confidence schedules against their closed forms (Srinivas et al. 2010; 003 eq. 8; IGP-UCB)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from warmbo import GP
from warmbo.bounds import IGPUCB, Constant, Srinivas
from warmbo.kernels import RBF


def test_srinivas_finite_domain():
    for t in (1, 2, 10, 100):
        expected = 2 * math.log(500 * t**2 * math.pi**2 / (6 * 0.05))
        assert Srinivas(delta=0.05, domain_size=500).beta_t(t) == pytest.approx(expected, rel=1e-14)


def test_srinivas_continuous_domain_003_eq8():
    t, d, a, b, r, delta = 7, 3, 2.0, 0.5, 1.5, 0.1
    expected = 2 * math.log(t**2 * 2 * math.pi**2 / (3 * delta)) + 2 * d * math.log(
        t**2 * d * b * r * math.sqrt(math.log(4 * d * a / delta))
    )
    assert Srinivas(delta=delta, dim=d, a=a, b=b, r=r).beta_t(t) == pytest.approx(expected, rel=1e-14)
    gp = GP(RBF(0.5)).fit(np.zeros((1, 3)), [0.0])
    assert Srinivas(delta=delta, a=a, b=b, r=r).beta_t(t, gp) == pytest.approx(expected, rel=1e-14)
    with pytest.raises(ValueError, match="dim"):
        Srinivas().beta_t(3)


def test_srinivas_on_a_space_takes_the_finite_form_for_a_finite_space():
    # before (a user test): a 50-point grid got the continuous form (beta_5 = 22.55, not 19.86)
    import warmbo as wb

    grid = wb.Space.grid(np.linspace(0, 1, 50)[:, None])
    expected = 2 * math.log(50 * 5**2 * math.pi**2 / (6 * 0.1))  # Srinivas et al. Thm 1, |D| = 50
    assert Srinivas(delta=0.1).for_space(grid).beta_t(5) == pytest.approx(expected, rel=1e-14)
    mixed = wb.Space([wb.Int("k", 1, 4), wb.Categorical("c", ["a", "b", "c"])])  # 12 points
    assert Srinivas().for_space(mixed).domain_size == 12
    box = wb.Space.box([(0.0, 1.0), (0.0, 2.0)])
    assert Srinivas().for_space(box) == Srinivas(dim=2)
    assert Srinivas(dim=3).for_space(grid) == Srinivas(dim=3)  # what is given stays


def test_schedules_grow_with_t():
    betas = [Srinivas(dim=2).beta_t(t) for t in range(1, 50)]
    assert np.all(np.diff(betas) > 0)


def test_igpucb_uses_information_gain_of_the_observed_points():
    X = np.random.default_rng(0).random((10, 2))
    gp = GP(RBF(0.3), noise=1 + 2 / 50).fit(X, np.sin(X[:, 0]))
    schedule = IGPUCB(B=3.0, R=0.1, delta=0.1)
    expected = (3.0 + 0.1 * math.sqrt(2 * (gp.info_gain() + 1 + math.log(10)))) ** 2
    assert schedule.beta_t(11, gp) == pytest.approx(expected, rel=1e-14)
    assert schedule.beta_t(1) == pytest.approx((3.0 + 0.1 * math.sqrt(2 * (1 + math.log(10)))) ** 2)
    assert schedule.beta_t(11, gp) > schedule.beta_t(1)
    # later rounds without the model: refused (before, gamma_10 was taken as 0, the round-1 width)
    with pytest.raises(ValueError, match=r"beta_t\(11\) needs the model holding the t - 1 = 10 points"):
        schedule.beta_t(11)


def test_constant_and_immutability():
    c = Constant(4.0)
    assert c.beta_t(1) == c(99) == 4.0
    with pytest.raises(AttributeError):
        c.beta = 5.0
    assert Constant(4.0) == c and "beta=4.0" in repr(c)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Srinivas(delta=0.0), "delta"),
        (lambda: Srinivas(delta=1.5), "delta"),
        (lambda: Srinivas(domain_size=0), "domain_size"),
        (lambda: Srinivas(a=-1.0), "^a must be"),
        (lambda: IGPUCB(B=-1.0), "B"),
        (lambda: IGPUCB(B=1.0, R=float("nan")), "R"),
        (lambda: Constant(float("inf")), "beta"),
        (lambda: Constant(1.0).beta_t(0), "round"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()
