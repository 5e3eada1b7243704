"""The optimizer's polish (infrepro/lmm/optimize.py): one Hessian per fit where the steps shrink,
the same optimum as a Newton step from it, and a convergence verdict that a kept Hessian cannot
make on its own when it is not clearly within the tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from infrepro.lmm import optimize
from infrepro.lmm.optimize import CONV_TOL, _Curvature, _Oracle, minimize_theta


class Quartic:
    """An even, smooth deviance: sum_k a_k (theta_k^2 - b_k)^2 + c (sum_k theta_k^2)^2, with
    b_k <= 0 putting theta_k's optimum on the boundary theta_k = 0."""

    has_gradient = True

    def __init__(self, a: np.ndarray, b: np.ndarray, c: float) -> None:
        self.a, self.b, self.c = a, b, c

    def __call__(self, theta: np.ndarray) -> float:
        return self.value_and_grad(theta)[0]

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        sq = theta**2
        total = float(np.sum(sq))
        value = float(np.sum(self.a * (sq - self.b) ** 2) + self.c * total**2)
        grad = 4.0 * self.a * (sq - self.b) * theta + 4.0 * self.c * total * theta
        return value, grad


def count_hessians(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = _Oracle.grad_hess

    def counted(self: _Oracle, x: np.ndarray, f0: float) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(x))
        return original(self, x, f0)

    monkeypatch.setattr(_Oracle, "grad_hess", counted)
    return calls


def test_interior_optimum_takes_one_hessian_and_is_stationary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    k = 12
    dev = Quartic(rng.uniform(0.5, 2.0, k), rng.uniform(0.5, 3.0, k), 0.01)
    calls = count_hessians(monkeypatch)
    res = minimize_theta(dev, k)
    assert res.converged and res.messages == []
    assert calls == [k]  # the polish's Hessian, kept for its later steps and the check
    _, grad = dev.value_and_grad(res.theta)
    hess = _Oracle(dev).grad_hess(res.theta, res.fun)[1]
    newton = np.linalg.solve(hess, grad)
    assert np.max(np.abs(newton) / np.maximum(res.theta, 1e-2)) < 1e-7


def test_boundary_repolish_starts_from_the_kept_hessian(monkeypatch: pytest.MonkeyPatch) -> None:
    a = np.array([1.0, 2.0, 0.7, 1.5])
    b = np.array([1.0, -0.5, 2.0, 0.8])  # theta_2's optimum is 0
    dev = Quartic(a, b, 0.02)
    calls = count_hessians(monkeypatch)
    res = minimize_theta(dev, len(a))
    assert res.theta[1] == 0.0 and res.converged
    assert len(calls) == 1
    free = res.theta != 0.0
    _, grad = dev.value_and_grad(res.theta)
    assert np.max(np.abs(grad[free])) < 1e-8


def steep_case() -> tuple[Quartic, np.ndarray, _Oracle, _Curvature]:
    """A point 5e-2 off the optimum (1, sqrt 2) and a kept Hessian 1e3 too steep there, which
    would call the point converged on its own."""
    dev = Quartic(np.array([1.0, 1.0]), np.array([1.0, 2.0]), 0.0)
    x = np.array([1.05, 1.4])
    o = _Oracle(dev)
    steep = _Curvature.at(1e3 * o.grad_hess(x, dev(x))[1], np.ones(2, dtype=bool))
    assert steep is not None
    return dev, x, o, steep


def test_check_takes_a_new_hessian_when_the_kept_one_is_not_clearly_within() -> None:
    dev, x, o, steep = steep_case()
    messages: list[str] = []
    assert not optimize._converged(o, x, dev(x), steep, messages)[0]
    assert messages and messages[0].startswith("optimizer may not have converged")
    scaled = float(messages[0].rsplit("=", 1)[1])
    assert scaled > CONV_TOL


def quartic_hessian(dev: Quartic, theta: np.ndarray) -> np.ndarray:
    """The Quartic's Hessian in closed form."""
    sq = theta**2
    total = float(np.sum(sq))
    diag = 4.0 * dev.a * (3.0 * sq - dev.b) + 4.0 * dev.c * total
    return np.diag(diag) + 8.0 * dev.c * np.outer(theta, theta)


@pytest.mark.parametrize("k", [optimize.CENTRAL_HESSIAN_MAX, optimize.CENTRAL_HESSIAN_MAX + 1])
def test_hessian_by_central_differences_up_to_the_limit_forward_above(k: int) -> None:
    """2k + 1 gradients (central) up to CENTRAL_HESSIAN_MAX parameters, k + 1 (forward) above;
    either is the closed-form Hessian to the differences' accuracy."""
    rng = np.random.default_rng(k)
    dev = Quartic(rng.uniform(0.5, 2.0, k), rng.uniform(0.5, 3.0, k), 0.05)
    theta = rng.uniform(0.3, 2.0, k)
    oracle = _Oracle(dev)
    _, hess = oracle.grad_hess(theta, dev(theta))
    central = k <= optimize.CENTRAL_HESSIAN_MAX
    assert oracle.n == (2 * k + 1 if central else k + 1)
    exact = quartic_hessian(dev, theta)
    error = np.max(np.abs(hess - exact)) / np.max(np.abs(exact))
    assert error < (1e-7 if central else 1e-3)
    assert central or error > 1e-7  # forward differences' first-order error: not central's


def test_forward_hessians_reach_the_optimum_of_central_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every Hessian by forward differences the polish lands where central ones do."""
    rng = np.random.default_rng(11)
    k = 6
    dev = Quartic(rng.uniform(0.5, 2.0, k), rng.uniform(-1.0, 3.0, k), 0.01)
    central = minimize_theta(dev, k)
    monkeypatch.setattr(optimize, "CENTRAL_HESSIAN_MAX", 0)
    forward = minimize_theta(dev, k)
    assert forward.converged and central.converged
    np.testing.assert_allclose(forward.theta, central.theta, rtol=1e-8, atol=1e-10)
    assert forward.n_evals < central.n_evals


@pytest.mark.parametrize(
    ("scale", "offset", "hessians", "converged"),
    [
        (1.05, 5e-5, 0, True),  # kept Hessian 5 % off: its chord steps contract at ~0.05
        (1 / 3, 2e-5, 1, True),  # 3x too flat: the chord steps overshoot, a new Hessian decides
        (1e3, 5e-2, 1, False),  # 1000x too steep far from the optimum: steps contract at ~1
    ],
)
def test_above_the_central_limit_a_contracting_chord_settles_the_check(
    monkeypatch: pytest.MonkeyPatch, scale: float, offset: float, hessians: int, converged: bool
) -> None:
    """Above CENTRAL_HESSIAN_MAX theta, a kept Hessian whose scaled step is within CONV_TOL
    but not clearly (0.1 CONV_TOL) judges alone when its chord steps contract (one gradient
    more, not k + 1); otherwise a new Hessian decides, as below the limit."""
    rng = np.random.default_rng(5)
    k = optimize.CENTRAL_HESSIAN_MAX + 4
    dev = Quartic(rng.uniform(0.5, 2.0, k), rng.uniform(0.5, 3.0, k), 0.0)
    optimum = np.sqrt(dev.b)
    x = optimum * (1.0 + offset * rng.choice([-1.0, 1.0], k))
    free = np.ones(k, dtype=bool)
    kept = _Curvature.at(scale * quartic_hessian(dev, x), free)
    assert kept is not None
    o = _Oracle(dev)
    scaled = optimize._scaled_step(o.fg(x)[1], kept.hess, x, free)
    assert 0.1 * CONV_TOL < scaled <= CONV_TOL or not converged  # the case the chord decides
    calls = count_hessians(monkeypatch)
    messages: list[str] = []
    assert optimize._converged(o, x, dev(x), kept, messages)[0] is converged
    assert len(calls) == hessians
    assert not converged or messages == []


def test_a_check_that_took_a_hessian_and_failed_polishes_on_from_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the check's own Hessian finds the step not within CONV_TOL (the polish stopped on
    a decrease below 1e-12 of the criterion), Newton steps go on from that Hessian and the
    point is judged again: converged, lower, with no further Hessian."""
    dev, x, o, steep = steep_case()
    calls = count_hessians(monkeypatch)
    messages: list[str] = []
    theta, value, converged = optimize._judged(o, x, dev(x), steep, messages)
    assert converged and messages == [] and value < dev(x)
    assert calls == [2]  # the check's Hessian, kept for the polish and the second check
    np.testing.assert_allclose(theta, [1.0, np.sqrt(2.0)], rtol=1e-6)  # from 5e-2 off
