"""Shared helpers of the benchmark suite: timers, summary statistics, peak memory, machine description.

Everything that more than one section needs lives here once: the wall-clock timer (``perf_counter``
with the garbage collector paused), the summary of repeated measurements (median, min, max, the
samples), the peak-memory probes (``tracemalloc`` for the Python and NumPy heap, a polling thread
for the resident set size, which also sees torch's allocations), the machine / version record
every results file carries, and the checkpoint file of the long sections (quality, transfer).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import importlib.metadata
import os
import platform
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "bootstrap_median_ci",
    "machine_info",
    "no_gc",
    "peak_memory",
    "summarize",
    "timed",
    "utc_now",
    "write_results",
]

_VERSIONED = ("warmbo", "numpy", "scipy", "scikit-learn", "torch", "gpytorch", "botorch", "optuna")


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time in seconds of one call of ``fn`` (garbage collector paused) and its result."""
    with no_gc():
        start = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - start
    return elapsed, out


def summarize(samples: list[float] | np.ndarray) -> dict:
    """Median, minimum, maximum and the samples of repeated measurements (seconds or any unit)."""
    arr = np.asarray(samples, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("summarize needs at least one sample")
    return {
        "median": float(np.median(arr)),
        "min": float(np.min(arr)),
        "max": float(np.max(arr)),
        "repeats": int(arr.size),
        "samples": [float(s) for s in arr],
    }


def bootstrap_median_ci(values: np.ndarray, level: float = 0.95, n_boot: int = 4000, seed: int = 0) -> list:
    """Percentile-bootstrap confidence interval of the median (seeded, so deterministic)."""
    values = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.choice(values, size=(n_boot, values.size), replace=True)
    medians = np.median(draws, axis=1)
    tail = (1.0 - level) / 2.0
    return [float(np.quantile(medians, tail)), float(np.quantile(medians, 1.0 - tail))]


def regret_trace(optimizer, objective, budget: int, on_tell: Callable[[], Any] | None = None):
    """Run ``optimizer``'s ask/tell loop for ``budget`` evaluations of ``objective`` (a test function
    with ``optimum_value``, called on the parameters in ``optimizer.space.names`` order), the way a
    user's loop would: returns the simple regret after each evaluation (best value so far minus the
    optimum, ``(budget,)``) and the CPU seconds of the whole loop. ``on_tell()`` runs after each tell
    (what a script records about the optimizer's state); its time counts."""
    names = optimizer.space.names
    started = time.process_time()
    values = []
    for _ in range(budget):
        params = optimizer.ask()
        value = float(objective(np.array([params[name] for name in names])))
        optimizer.tell(params, value)
        values.append(value)
        if on_tell is not None:
            on_tell()
    seconds = time.process_time() - started
    return np.minimum.accumulate(values) - objective.optimum_value, seconds


def sign_test(arm: np.ndarray, base: np.ndarray, rtol: float = 1e-6) -> dict:
    """Paired comparison of two arms' final regrets (lower is better; pairs share a seed): how many
    pairs ``arm`` ended lower, higher or equal (to ``rtol`` relative), and the two-sided sign test's
    p-value on the pairs that differ (1.0 when none differ)."""
    from scipy.stats import binomtest

    a, b = np.asarray(arm, dtype=np.float64), np.asarray(base, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"sign_test needs paired results of the same shape, got {a.shape} and {b.shape}")
    tie = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))
    wins, losses = int(np.sum((a < b) & ~tie)), int(np.sum((a > b) & ~tie))
    return {
        "wins": wins,
        "losses": losses,
        "ties": int(tie.sum()),
        "p_value": float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0,
    }


class _RSSPoller:
    """Samples the resident set size (``/proc/self/statm``) every millisecond in a thread."""

    def __init__(self) -> None:
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self.available = Path("/proc/self/statm").is_file()
        self.start = self.peak = self._read()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> int:
        if not self.available:
            return 0
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * self.page

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._read())
            self._stop.wait(0.001)

    def __enter__(self) -> _RSSPoller:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._read())


def peak_memory(fn: Callable[[], Any]) -> dict:
    """Peak memory of one call of ``fn``, above what was in use when it started.

    Returns ``{"tracemalloc_bytes": ..., "rss_bytes": ...}``: the peak of memory traced by
    ``tracemalloc`` (Python objects and NumPy buffers; not torch tensors, not BLAS workspace), and the
    growth of the resident set size seen by a 1 ms polling thread (every allocator, but memory the
    process already held from earlier calls is reused and not counted; None where ``/proc`` is absent).
    """
    gc.collect()
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        with _RSSPoller() as poller:
            fn()
        traced = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not started:
            tracemalloc.stop()
    return {
        "tracemalloc_bytes": int(traced),
        "rss_bytes": int(poller.peak - poller.start) if poller.available else None,
    }


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict:
    """The hardware and software a run measured: CPU, cores, BLAS, Python, package versions, git commit."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": None,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": None,
        "python": sys.version.split()[0],
        "versions": {name: _version(name) for name in _VERSIONED},
        "blas": None,
        "git_commit": None,
        "load_average": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
                    break
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: p.get(k) for k in ("internal_api", "version", "num_threads", "prefix")}
            for p in threadpool_info()
        ]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if out.returncode == 0:
            info["git_commit"] = out.stdout.strip()
    return info


def utc_now() -> str:
    """The current time, ISO 8601 in UTC, to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def listed(parser, text: str, allowed, what: str) -> list[str]:
    """The comma-separated names of a bench script's option ``text`` (``--arms a,b``), each one of
    ``allowed``; an unknown one ends the script with ``parser.error`` naming ``what`` it is."""
    names = text.split(",")
    for name in names:
        if name not in allowed:
            parser.error(f"unknown {what} {name!r}; choose from {', '.join(allowed)}")
    return names


def timed_run(start, evaluate: Callable[[dict], float], to_loss: Callable[[float], float]) -> dict:
    """One run of the bench scripts' paired experiments: ``start(objective)`` runs an optimizer on
    ``objective`` (a function of a parameter dict, to maximise, wrapping ``evaluate``); returns the
    loss (``to_loss`` of each value) of the best after each evaluation and the optimizer's CPU seconds
    (the run's minus the objective's own)."""
    losses: list[float] = []
    spent = [0.0]

    def objective(params: dict) -> float:
        started = time.process_time()
        value = float(evaluate(params))
        spent[0] += time.process_time() - started
        losses.append(to_loss(value))
        return -losses[-1]  # (every arm maximises minus the loss)

    started = time.process_time()
    start(objective)
    cpu = time.process_time() - started
    return {"loss": np.minimum.accumulate(losses).tolist(), "optimizer_cpu_s": cpu - spent[0]}


def optuna_start(arm: str, seed: int, budget: int, params_of: Callable[[Any], dict]):
    """``start`` for :func:`timed_run`: Optuna's ``GPSampler`` (``arm == "optuna-gp"``), warmbo's
    own ``WarmboSampler`` (``"warmbo-sampler"``) or ``TPESampler`` with its defaults and ``seed``,
    ``budget`` trials, ``params_of(trial)`` the trial's parameters."""

    def start(objective: Callable[[dict], float]) -> None:
        import optuna

        from ..integrations.optuna import WarmboSampler

        kind = {"optuna-gp": optuna.samplers.GPSampler, "warmbo-sampler": WarmboSampler}.get(
            arm, optuna.samplers.TPESampler
        )
        study = optuna.create_study(direction="maximize", sampler=kind(seed=seed))
        study.optimize(lambda trial: objective(params_of(trial)), n_trials=budget)

    return start


def write_results(path: str | Path, results: dict) -> None:
    """Record the load average at the end in ``results`` and write them as JSON to ``path`` (its folder
    made if needed), the closing step of the bench scripts' paired experiments."""
    import json

    results["load_average_end"] = os.getloadavg()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    print(f"wrote {path}")


def git_commit() -> str | None:
    """The checkout's git commit (short hash), or None outside a git checkout."""
    return machine_info().get("git_commit")


def load_checkpoint(
    path: Path | None, key: dict, section: str, log: Callable[[str], None]
) -> tuple[dict, list]:
    """The finished work a long section saved in ``path`` and the git commits that made it.

    Returns ``({}, [])`` when there is no checkpoint, when it cannot be read, or when it was written
    with settings other than ``key`` (said in the log: such work is never mixed in).
    """
    import json

    if path is None or not path.exists():
        return {}, []
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        log(f"{section}: ignoring the unreadable checkpoint {path} ({error})")
        return {}, []
    if saved.get("key") != key:
        log(f"{section}: ignoring the checkpoint {path}: it was written with other settings")
        return {}, []
    return saved.get("done", {}), list(saved.get("git_commits", []))


def save_checkpoint(path: Path | None, key: dict, done: dict, commits: list) -> None:
    """Write a long section's finished work to ``path`` atomically (a run killed while writing leaves
    the previous checkpoint); nothing when ``path`` is None."""
    import json

    if path is None:
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": key, "git_commits": commits, "done": done}))
    tmp.replace(path)
