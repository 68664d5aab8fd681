"""Cholesky with adaptive jitter and block Cholesky updates (warmbo._linalg)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from warmbo._linalg import (
    JitterWarning,
    NotPositiveDefiniteError,
    cholesky,
    cholesky_append,
    solve_lower,
    solve_upper,
)
from warmbo.kernels import RBF


def random_spd(n, seed, cond_shift=1.0):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    return B @ B.T / n + cond_shift * np.eye(n)


def duplicated_gram(seed=0):
    """RBF Gram matrix of 6 points each listed twice: PSD of rank 6, singular, no noise."""
    X = np.random.default_rng(seed).uniform(size=(6, 2))
    return RBF(0.5).gram(np.vstack([X, X]))


# Reconstruction L L^T of a well-conditioned matrix with O(1) entries: backward error of Cholesky is
# O(n eps ||A||) ~ 1e-15 for n <= 30, so 1e-12 is a comfortable bound.
TOL = 1e-12


@pytest.mark.parametrize("n", [1, 2, 5, 30])
def test_cholesky_of_spd_matrix(n):
    A = random_spd(n, seed=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning (JitterWarning included) fails the test
        L, jitter = cholesky(A)
    assert jitter == 0.0
    assert L.shape == (n, n)
    np.testing.assert_array_equal(L, np.tril(L))
    assert np.all(np.diag(L) > 0)
    np.testing.assert_allclose(L @ L.T, A, rtol=0, atol=TOL)


def test_cholesky_of_empty_matrix():
    L, jitter = cholesky(np.zeros((0, 0)))
    assert L.shape == (0, 0) and jitter == 0.0


def test_rank_deficient_psd_matrix_gets_jitter_with_warning():
    A = duplicated_gram()
    with pytest.raises(np.linalg.LinAlgError):  # precondition: plain Cholesky fails on this matrix
        np.linalg.cholesky(A)
    with pytest.warns(JitterWarning) as record:
        L, jitter = cholesky(A, name="K")
    assert jitter > 0
    # Smallest relative jitter tried is 1e-10 x mean diagonal (= 1 here); at most the 1e-4 cap.
    assert 1e-10 <= jitter <= 1e-4
    message = str(record[0].message)
    assert f"{jitter:.3g}" in message
    assert "K" in message and "jitter" in message
    np.testing.assert_allclose(L @ L.T, A + jitter * np.eye(A.shape[0]), rtol=0, atol=TOL)
    np.testing.assert_array_equal(L, np.tril(L))


def test_jitter_warning_is_a_runtime_warning():
    assert issubclass(JitterWarning, RuntimeWarning)


def test_jitter_scales_with_mean_diagonal():
    A = duplicated_gram()
    with pytest.warns(JitterWarning):
        _, j1 = cholesky(A)
    with pytest.warns(JitterWarning):
        L, j100 = cholesky(100.0 * A)
    # Same relative jitter on a matrix 100 times larger: jitter is relative to mean(diag A).
    assert j100 == pytest.approx(100.0 * j1, rel=1e-12)
    # Reconstruction error relative to ||A|| ~ 100 * 12.
    np.testing.assert_allclose(L @ L.T, 100.0 * A + j100 * np.eye(12), rtol=0, atol=100 * TOL)


@pytest.mark.parametrize(
    "A",
    [np.diag([1.0, -1.0]), np.array([[1.0, 2.0], [2.0, 1.0]]), -np.eye(3)],
    ids=["diag(1,-1)", "eig(3,-1)", "minus-identity"],
)
def test_indefinite_matrix_raises(A):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it must raise, not warn and return
        with pytest.raises(NotPositiveDefiniteError, match="not positive definite") as info:
            cholesky(A, name="K")
    assert isinstance(info.value, ValueError)
    assert "K" in str(info.value)


def test_not_positive_definite_error_is_value_error():
    assert issubclass(NotPositiveDefiniteError, ValueError)
    assert issubclass(NotPositiveDefiniteError, np.linalg.LinAlgError)


def test_max_jitter_is_respected():
    # Smallest eigenvalue -1e-6 relative: fixable with 1e-4 jitter, not with 1e-8.
    A = np.diag([1.0, 1.0, -1e-6])
    A[:2, :2] += 0.5
    with pytest.raises(NotPositiveDefiniteError):
        cholesky(A, max_jitter=1e-8)
    with pytest.warns(JitterWarning):
        L, jitter = cholesky(A)
    assert jitter > 1e-6
    np.testing.assert_allclose(L @ L.T, A + jitter * np.eye(3), rtol=0, atol=TOL)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_matrix_raises(bad):
    A = random_spd(4, seed=1)
    A[1, 2] = A[2, 1] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        cholesky(A)
    with pytest.raises(NotPositiveDefiniteError):
        cholesky(A)


@pytest.mark.parametrize("shape", [(2, 3), (3,), (2, 2, 2)])
def test_non_square_raises(shape):
    with pytest.raises(ValueError, match="square"):
        cholesky(np.ones(shape), name="K")


@pytest.mark.parametrize("n, k", [(1, 1), (5, 1), (8, 3), (20, 7), (0, 4)])
def test_cholesky_append_matches_full_factor(n, k):
    for seed in range(5):
        full = random_spd(n + k, seed=100 * n + 10 * k + seed)
        A, B, C = full[:n, :n], full[:n, n:], full[n:, n:]
        L, _ = cholesky(A)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            S_T, M, jitter = cholesky_append(L, B, C)
        assert jitter == 0.0
        assert S_T.shape == (k, n) and M.shape == (k, k)
        np.testing.assert_array_equal(M, np.tril(M))
        big = np.block([[L, np.zeros((n, k))], [S_T, M]])
        # Both factors are backward stable for a matrix with condition number <= ~10: agreement to
        # ~1e-14; 1e-10 is the required bound.
        np.testing.assert_allclose(big, np.linalg.cholesky(full), rtol=0, atol=1e-10)
        np.testing.assert_allclose(big @ big.T, full, rtol=0, atol=1e-10)


def test_cholesky_append_jitters_a_singular_schur_complement():
    # Appending exact copies of the old points (no noise): the Schur complement C - S^T S is 0 up to
    # round-off (~1e-16) and needs jitter, as documented ("jittered if needed, with a warning"). The full
    # matrix is fixed by cholesky() with jitter 1e-10 (test above); the appended factor must be too.
    A = duplicated_gram()
    K_old = A[:6, :6]
    L, _ = cholesky(K_old)
    with pytest.warns(JitterWarning, match="jitter"):
        S_T, M, jitter = cholesky_append(L, A[:6, 6:], A[6:, 6:])
    assert jitter > 0
    big = np.block([[L, np.zeros((6, 6))], [S_T, M]])
    expected = A.copy()
    expected[6:, 6:] += jitter * np.eye(6)
    # Cancellation in C - S^T S (entries O(1)) leaves errors ~1e-15; 1e-10 as for the SPD case.
    np.testing.assert_allclose(big @ big.T, expected, rtol=0, atol=1e-10)


def test_triangular_solves():
    A = random_spd(6, seed=7)
    L, _ = cholesky(A)
    b = np.random.default_rng(8).standard_normal((6, 2))
    # Triangular solves of a well-conditioned system: residual ~1e-15.
    np.testing.assert_allclose(L @ solve_lower(L, b), b, rtol=0, atol=TOL)
    np.testing.assert_allclose(L.T @ solve_upper(L, b), b, rtol=0, atol=TOL)
    np.testing.assert_allclose(solve_upper(L, solve_lower(L, b)), np.linalg.solve(A, b), rtol=0, atol=TOL)
    assert solve_lower(np.zeros((0, 0)), np.zeros((0, 3))).shape == (0, 3)
