"""The README's main job: GP-UCB and GP-EI against random search on two test problems.

GP-UCB and GP-EI are :class:`warmbo.Optimizer` with its default model (a GP with Matern-5/2 ARD
times a constant, ML-II with output standardisation, warm-started refits) and ``UCB(Srinivas)``
(003 eq. 8) or ``EI()``; each run starts from the optimizer's scrambled Sobol design of
``n_initial`` points. Random search draws the same design, then uniform points. The figure of merit
is the simple regret ``f* - max_{s<=t} f(x_s)`` (maximisation form of each problem). Results: a table
in the terminal, ``results.json``, ``regret.png`` and a self-contained ``report.html`` in the output
folder. The demo measures the optimizer users run: there is no private BO loop here.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
from rich.console import Console

from .._progress import LineProgress
from .._registry import Registry
from .._threads import blas_limited
from ..acquisition import EI, UCB, Acquisition
from ..bounds import Srinivas
from ..kernels import Constant
from ..models import GP
from ..problems import branin, cumulative_inference_regret, hartmann6, simple_regret
from ..space import Space

__all__ = ["PANELS", "DemoResult", "Panel", "readme_block", "run_demo", "update_readme"]


@dataclass
class DemoResult:
    """Simple-regret traces per problem and method (runs x evaluations)."""

    problems: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)
    seconds: float = 0.0
    settings: dict = field(default_factory=dict)

    def summary(self) -> list[dict]:
        """One row per (problem, method): median final regret and its interquartile range."""
        rows = []
        for problem, methods in self.problems.items():
            for method, traces in methods.items():
                final = np.array([trace[-1] for trace in traces])
                rows.append(
                    {
                        "problem": problem,
                        "method": method,
                        "median_final_regret": float(np.median(final)),
                        "q25": float(np.quantile(final, 0.25)),
                        "q75": float(np.quantile(final, 0.75)),
                        "runs": len(traces),
                    }
                )
        return rows


def bo_run(problem, budget: int, n_initial: int, seed: int, acquisition: Acquisition) -> np.ndarray:
    """Simple regret trace of warmbo's :class:`~warmbo.Optimizer` (default model) with ``acquisition``
    on a maximisation problem: the demo measures the optimizer users run, not a private loop."""
    from ..optimizer import Optimizer

    space = Space.box(problem.bounds)
    opt = Optimizer(space, acquisition=acquisition, maximize=True, seed=seed, n_initial=n_initial)
    values = []
    for _ in range(budget):
        params = opt.ask()
        values.append(float(problem(np.array([[params[name] for name in space.names]]))[0]))
        opt.tell(params, values[-1])
    return simple_regret(np.array(values), problem.optimum_value)


def random_run(problem, budget: int, n_initial: int, seed: int) -> np.ndarray:
    """Simple regret trace of random search (same initial design, then uniform points)."""
    space = Space.box(problem.bounds)
    U = space.sample_encoded(n_initial, seed=seed)
    rest = np.random.default_rng(seed).random((budget - n_initial, space.dim))
    y = problem(problem.from_unit(np.vstack([U, rest])))
    return simple_regret(y, problem.optimum_value)


def metakel_run(kernel_name: str, budget: int, seed: int, m: int = 20, n: int = 20) -> np.ndarray:
    """Cumulative inference regret of GP-UCB on a Legendre task (000 App. E) with k_hat or k_full.

    The inference regret of round t is ``f* - f(argmax_x mu_{t-1}(x))`` (000 App. E): how good the
    model's own guess of the maximiser is, which is where the hypothesis space shows. The target is
    ``-f`` (000 Fig. 7 minimises): the Legendre functions of App. E have non-negative coefficients and
    ``P_j(1) = 1``, so their maximum is always at x = 1, a trivial problem.

    Meta-KeL learns k_hat from m offline tasks of n points; GP-UCB then runs on a 500-point grid of
    [-1, 1] with the regulariser ``sbar^2`` of 000 eq. 2 and ``beta_t = nu_t^2`` of Cor. 7 (for k_full,
    the same formula with all p kernels: d = p, c1 = 1). The loop is the reproduction's
    :func:`warmbo.experiments.metakel.gp_ucb` (000 eq. A.2 on the grid).
    """
    from ..bounds import MetaKeLBound
    from ..problems.legendre import LegendreSetup
    from ..transfer.metakel import MetaKeL, full_kernel
    from .metakel import _negated, gp_ucb

    setup = LegendreSetup(seed=seed)
    rng = np.random.default_rng(10_000 + seed)
    if kernel_name == "k_hat":
        meta = MetaKeL(setup.base, noise=setup.noise).fit(setup.meta_data(m, n, rng))
        kernel, schedule = meta.kernel_, meta.bound(B=setup.B, sigma=setup.noise, T=budget)
    else:
        kernel = full_kernel(setup.base)
        schedule = MetaKeLBound(B=setup.B, sigma=setup.noise, d_hat=setup.p, c1=1.0, T=budget)
    f = setup.sample_function(np.random.default_rng(20_000 + seed))
    target = _negated(f)  # minimise f
    grid = np.linspace(-1, 1, 500)[:, None]
    trace = gp_ucb(target, kernel, schedule, grid, budget, setup.noise, schedule.regulariser, 30_000 + seed)
    return cumulative_inference_regret(trace["recommended"], float(np.max(target(grid))))


def envelope_run(method: str, budget: int, seed: int) -> np.ndarray:
    """Simple regret of BO on 003's synthetic related task, with Envelope-BO or without transfer.

    Source: 25 uniform points of the 2-D Gaussian pdf centred at (0, 0) on [-3, 3]^2; target: the
    same pdf centred at (0.1, 0.1); 2 initial points; EI with the incumbent mu+ (003 eq. 11).
    """
    from ..acquisition import EI as _EI
    from ..optimizer import Optimizer
    from ..transfer.envelope import Envelope

    space = Space.box([(-3.0, 3.0), (-3.0, 3.0)])

    def pdf(X, centre):
        return np.exp(-0.5 * np.sum((np.atleast_2d(X) - centre) ** 2, axis=1)) / (2 * np.pi)

    rng = np.random.default_rng(40_000 + seed)
    Xs = rng.uniform(-3, 3, (25, 2))
    source = (space.encode([{"x0": a, "x1": b} for a, b in Xs]), pdf(Xs, np.zeros(2)))
    model = Envelope(source=source, seed=seed) if method == "envelope" else None
    opt = Optimizer(
        space, model=model, acquisition=_EI(incumbent="mean"), maximize=True, seed=seed, n_initial=2
    )
    target = np.array([0.1, 0.1])
    opt.run(lambda p: float(pdf(np.array([p["x0"], p["x1"]]), target)[0]), budget=budget, progress=False)
    return simple_regret(np.array([t.value for t in opt.history]), 1 / (2 * np.pi))


def tuned_prior_run(method: str, budget: int, seed: int) -> np.ndarray:
    """Simple regret of GP-EI on Ackley (004 Section 6.1, normalised) with or without a tuned prior.

    The auxiliary data are 50 random points of the flipped function (same features, opposite
    values); TunedPrior learns the weight prior K^A_2 from them on the centred domain (kernel ridge
    regression, SE free kernel, scale and C by leave-one-out), interpolated for speed as in the
    reproduction. Plain BO uses an SE kernel tuned by leave-one-out on the target data.
    """
    from ..kernels import RBF, free
    from ..kernels.interpolated import InterpolatedTunedKernel
    from ..optimizer import Optimizer
    from ..transfer.tuned_prior import TunedPrior
    from .tuned_prior import normalised_problem

    problem = normalised_problem("ackley")
    space = Space.box([(-1.0, 1.0), (-1.0, 1.0)])
    if method == "tuned":
        rng = np.random.default_rng(60_000 + seed)
        aux = rng.uniform(-1.0, 1.0, (50, 2))
        tp = TunedPrior(free.SE(0.6), learner="krr", centre=True).fit(
            space.encode([{"x0": a, "x1": b} for a, b in aux]), problem.flipped(aux)
        )
        kernel = tp.kernel_ if tp.vanished_ else InterpolatedTunedKernel(tp.kernel_)
        model = GP(Constant(1.0, bounds=(1e-3, 1e2)) * kernel, noise=1e-4, optimizer="ml2", normalize_y=True)
    else:
        kernel = Constant(1.0, bounds=(1e-3, 1e2)) * RBF(0.3, bounds=(1e-2, 1e2))
        model = GP(kernel, noise=1e-4, optimizer="loo", normalize_y=True, n_restarts=2, seed=seed)
    opt = Optimizer(space, model=model, maximize=True, seed=seed, n_initial=3)
    opt.run(lambda p: float(problem(np.array([[p["x0"], p["x1"]]]))[0]), budget=budget, progress=False)
    return simple_regret(np.array([t.value for t in opt.history]), 1.0)


def multitask_run(method: str, budget: int, seed: int, n_tasks: int = 5, noise: float = 0.5) -> np.ndarray:
    """Time-average cumulative regret R_C(t)/t of MT-KB or IT-KB on an RKHS function of 001 Section 5.

    f = sum_{i<=50} Gamma(., x_i) c_i on the 0.01-net of [0, 1] with ``Gamma = k B``, k SE with
    lengthscale 0.2, ``B = A^T A`` (A uniform on [0, 1]^{n x n}), c_i uniform on [-1, 1]^n; observations
    carry N(0, noise^2) noise (0.5, about a tenth of each task's spread; 001 uses 0.1). Both run
    :class:`~warmbo.MultiTaskOptimizer` (default constant beta = 1) with the Chebyshev
    scalarisation (reference point ``0.1 + 3 noise`` below each task's minimum, under every observation
    but one in about a thousand: at 0.1 below, noisy observations fell under it and the optimizer
    warned that the utility then follows one task alone): MT-KB with the true ICM kernel,
    IT-KB with its independent counterpart ``k diag(B)`` (same per-task variances, no correlation).
    """
    from ..kernels import RBF
    from ..kernels.multitask import ICM
    from ..multitask_optimizer import MultiTaskOptimizer
    from ..scalarization import Chebyshev

    grid = np.linspace(0.0, 1.0, 101)[:, None]
    rng = np.random.default_rng(70_000 + seed)
    A = rng.uniform(size=(n_tasks, n_tasks))
    B = A.T @ A
    truth = ICM(RBF(0.2), B)
    centres = grid[rng.choice(101, 50, replace=False)]
    F = (truth.gram(grid, centres) @ rng.uniform(-1.0, 1.0, 50 * n_tasks)).reshape(101, n_tasks)
    kernel = truth if method == "MT-KB" else ICM(RBF(0.2), np.diag(np.diag(B)))
    scalarization = Chebyshev(ref=tuple(F.min(axis=0) - 0.1 - 3.0 * noise))
    opt = MultiTaskOptimizer(  # eq. 3 as 001 states it (the optimizer's default is the componentwise form)
        Space.grid(grid), kernel, scalarization=scalarization, n_initial=2, seed=seed, optimism="norm"
    )
    noise_rng = np.random.default_rng(71_000 + seed)

    def objective(params):
        i = int(np.rint(params["x0"] * 100))
        return F[i] + noise * noise_rng.standard_normal(n_tasks)

    opt.run(objective, budget=budget, progress=False)
    utility = scalarization.expected(F, scalarization.sample_weights(n_tasks, opt.n_weights, opt.seed))
    chosen = [int(np.rint(t.params["x0"] * 100)) for t in opt.history]
    regret = np.cumsum(np.max(utility) - utility[chosen])
    return regret / np.arange(1, len(chosen) + 1)


@dataclass(frozen=True)
class Panel:
    """One panel of the demo: a problem, its budget (full, quick) and the methods run on it.

    ``runners`` map a method's label to ``run(budget, seed) -> regret trace``; ``n_initial`` and
    ``optimum`` are reported with the panel (0 and None for the warm-start panels, whose methods set
    their own design and whose regret is against a known optimum inside the run).
    """

    name: str
    budget: tuple[int, int]
    runners: dict
    n_initial: int = 0
    optimum: float | None = None

    def setting(self, quick: bool) -> dict:
        return {
            "budget": self.budget[1] if quick else self.budget[0],
            "n_initial": self.n_initial,
            "optimum": self.optimum,
        }


def _cold_panel(name: str, problem, budget: tuple[int, int], n_initial: int) -> Panel:
    """GP-UCB, GP-EI (the product's Optimizer) and random search on a test problem."""
    methods = {
        "GP-UCB": partial(bo_run, acquisition=UCB(Srinivas(delta=0.1))),
        "GP-EI": partial(bo_run, acquisition=EI()),
        "random": random_run,
    }
    runners = {label: partial(_on_problem, fn, problem, n_initial) for label, fn in methods.items()}
    return Panel(name, budget, runners, n_initial, problem.optimum_value)


def _on_problem(fn, problem, n_initial: int, budget: int, seed: int) -> np.ndarray:
    return fn(problem, budget, n_initial, seed=seed)


def _warm_panel(name: str, budget: tuple[int, int], methods: dict) -> Panel:
    """A warm-start method against its paper's baseline; ``methods`` map labels to ``run(budget, seed)``."""
    return Panel(name, budget, dict(methods))


#: The demo's panels, in the order of the README table (the same registry pattern as ``warmbo
#: bench``'s sections and ``warmbo reproduce``'s experiments).
PANELS: Registry[Panel] = Registry("demo panel")
PANELS.register("branin", _cold_panel("branin", branin().maximize_form(), (30, 20), 5))
PANELS.register("hartmann6", _cold_panel("hartmann6", hartmann6().maximize_form(), (45, 25), 8))
for _panel in (
    _warm_panel(
        "envelope (003 synthetic, related source)",
        (15, 10),
        {"Envelope-BO": partial(envelope_run, "envelope"), "Generic-BO": partial(envelope_run, "generic")},
    ),
    _warm_panel(
        "tuned prior (004, flipped ackley)",
        (20, 12),
        {
            "GP-EI tuned prior": partial(tuned_prior_run, "tuned"),
            "GP-EI plain": partial(tuned_prior_run, "plain"),
        },
    ),
    _warm_panel(
        "multi-task (001 RKHS, 5 tasks): R_C(t)/t",
        (30, 20),
        {
            "MT-KB (ICM kernel)": partial(multitask_run, "MT-KB"),
            "IT-KB (independent tasks)": partial(multitask_run, "IT-KB"),
        },
    ),
    _warm_panel(
        "meta-kel (cumulative inference regret)",
        (30, 20),
        {
            "GP-UCB k_hat (Meta-KeL)": partial(metakel_run, "k_hat"),
            "GP-UCB k_full": partial(metakel_run, "k_full"),
        },
    ),
):
    PANELS.register(_panel.name, _panel)


@blas_limited
def run_demo(out: Path, quick: bool = False, progress=None, panels: list[str] | None = None) -> DemoResult:
    """Run the comparison and write ``results.json`` and ``regret.png`` into ``out``.

    ``panels`` names a subset of :data:`PANELS` (default: all, in their order).
    """
    runs = 2 if quick else 5
    chosen = [PANELS.lookup(name) for name in (list(PANELS) if panels is None else panels)]
    result = DemoResult(settings={"runs": runs, "seeds": list(range(runs)), "quick": quick})
    start = time.perf_counter()
    panels_run = {}
    for panel in chosen:
        setting = panel.setting(quick)
        runners = {label: partial(run, setting["budget"]) for label, run in panel.runners.items()}
        panels_run[panel.name] = (setting, runners)
    if progress is None:
        progress = LineProgress(Console(quiet=True))
    total = runs * sum(len(runners) for _, runners in panels_run.values())
    overall = progress.add_task("demo", total=total, unit="runs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, (setting, runners) in panels_run.items():
            result.problems[name] = {}
            result.settings[name] = setting
            for method, run in runners.items():
                task = progress.add_task(f"{name}: {method}", total=runs, unit="runs")
                traces = []
                for seed in range(runs):
                    traces.append(run(seed=seed).tolist())
                    progress.advance(task)
                    progress.advance(overall)
                progress.remove_task(task)
                result.problems[name][method] = traces
    result.seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    results = asdict(result) | {"summary": result.summary()}
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "table.md").write_text(readme_block(results))
    plot_regret(result, out / "regret.png")
    write_demo_report(result, out)
    return result


def write_demo_report(result: DemoResult, out: Path) -> Path:
    """``report.html``: the setting, the table of final regrets and the regret plot."""
    from ..report import write_experiment_report

    lines = [
        f"{row['problem']}: {row['method']} median {metric(row['problem'])} {row['median_final_regret']:.3g} "
        f"(interquartile range {row['q25']:.3g} to {row['q75']:.3g}) over {row['runs']} runs"
        for row in result.summary()
    ]
    setting = (
        "GP-UCB and GP-EI are warmbo.Optimizer with its default model (a Constant x Matern-5/2 ARD GP, "
        "MAP hyperparameters under dimension-scaled priors, a fitted constant mean, the Yeo-Johnson "
        "output transform) and a scrambled Sobol design; GP-UCB uses the Srinivas beta_t of 003 eq. 8 "
        "with delta = 0.1. Random search draws uniform points. The warm-start panels pit each method "
        "against its paper's baseline: Envelope-BO reusing a related finished run (003), a prior tuned "
        "on auxiliary data (004), MT-KB against independent tasks (001, time-average cumulative "
        "regret of the expected utility) and GP-UCB with a meta-learned kernel (000, cumulative "
        "inference regret)."
    )
    sections = [
        ("Setting", setting, []),
        ("Final regret (simple regret unless the problem names another)", "\n\n".join(lines), []),
        ("Regret per evaluation (median, interquartile band)", "", [out / "regret.png"]),
    ]
    title = "warmbo demo: GP-UCB and GP-EI vs random search, and each warm start against its baseline"
    return write_experiment_report(out, title, sections)


def metric(problem: str) -> str:
    """What a demo problem's regret is: simple regret unless its name says otherwise."""
    if "R_C" in problem:
        return "R_C(t)/t (time-average cumulative regret)"
    return "cumulative inference regret" if "cumulative" in problem else "simple regret"


def plot_regret(result: DemoResult, path: Path) -> None:
    """Median regret (each problem's own: :func:`metric`) with interquartile band, one panel per
    problem (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    count = len(result.problems)
    columns = min(count, 3)
    rows = -(-count // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    for ax in axes.ravel()[count:]:
        ax.set_visible(False)
    for ax, (problem, methods) in zip(axes.ravel(), result.problems.items(), strict=False):
        for method, traces in methods.items():
            arr = np.maximum(np.asarray(traces), 1e-8)
            t = np.arange(1, arr.shape[1] + 1)
            ax.plot(t, np.median(arr, axis=0), label=method)
            ax.fill_between(t, np.quantile(arr, 0.25, axis=0), np.quantile(arr, 0.75, axis=0), alpha=0.2)
        ax.set_yscale("log")
        ax.set_title(problem)
        ax.set_xlabel("evaluations")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # (not 2.5, 7.5, ... evaluations)
        ax.set_ylabel(metric(problem))
        ax.legend(fontsize="small", framealpha=0.6)
    runs = len(next(iter(next(iter(result.problems.values())).values())))
    fig.suptitle(f"median over {runs} runs; shaded: interquartile range", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------------ README table
#: The README region between these markers is generated by :func:`update_readme`, never edited by hand.
README_BEGIN = (
    "<!-- demo table: generated by python -m warmbo.experiments.demo --update-readme; do not edit -->"
)
README_END = "<!-- demo table: end -->"
#: Where the README's table comes from (the summary and settings of a results.json, no traces),
#: relative to the README's folder; a test checks that the README holds exactly its table.
README_SOURCE = Path("docs") / "demo-results.json"


def _seed_text(seeds: list[int]) -> str:
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))) and len(seeds) > 2:
        return f"seeds {seeds[0]} to {seeds[-1]}"
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(str(s) for s in seeds)}"


TABLE_HEADER = ("problem", "evals", "method", "median regret", "IQR")


def table_rows(results: dict) -> list[tuple[str, ...]]:
    """Cells of the demo table (:data:`TABLE_HEADER`) from the contents of a ``results.json``."""
    settings = results["settings"]
    return [
        (
            row["problem"],
            str(settings[row["problem"]]["budget"]),
            row["method"],
            f"{row['median_final_regret']:.3g}",
            f"[{row['q25']:.3g}, {row['q75']:.3g}]",
        )
        for row in results["summary"]
    ]


def plain_table(results: dict) -> str:
    """The demo table as aligned plain text (what a piped ``warmbo demo`` prints, and the README)."""
    rows = [TABLE_HEADER, *table_rows(results)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(TABLE_HEADER))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def readme_block(results: dict) -> str:
    """The README's demo table from the contents of a ``results.json``: runs and seeds, then the table.

    Uses ``summary`` (one row per problem and method), ``settings`` (``runs``, ``seeds``, ``quick``
    and each problem's ``budget``) and ``seconds``; the traces are not needed.
    """
    settings = results["settings"]
    runs = int(settings["runs"])
    seeds = [int(s) for s in settings.get("seeds", range(runs))]
    counts = sorted({int(row["runs"]) for row in results["summary"]})
    if counts != [runs]:
        raise ValueError(f"results say {runs} runs per method but the summary rows have {counts}")
    preset = "`warmbo demo --quick`" if settings.get("quick") else "`warmbo demo`"
    intro = (
        f"Final regret, median and interquartile range over {runs} runs per method "
        f"({_seed_text(seeds)}; {preset} in {float(results['seconds']):.0f} s):"
    )
    return f"{intro}\n\n```\n{plain_table(results)}\n```\n"


def update_readme(readme: Path, results: Path | None = None) -> bool:
    """Rewrite the demo table of ``readme`` between :data:`README_BEGIN` and :data:`README_END`.

    With ``results`` (a demo's ``results.json``) its summary and settings are first stored as the
    README's source, :data:`README_SOURCE` next to the README; without, the table is regenerated from
    that source. Returns whether the README changed.
    """
    readme = Path(readme)
    source = readme.parent / README_SOURCE
    if results is not None:
        data = json.loads(Path(results).read_text())
        kept = {key: data[key] for key in ("settings", "summary", "seconds")}
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(json.dumps(kept, indent=2) + "\n")
    text = readme.read_text()
    new = replace_region(text, readme_block(json.loads(source.read_text())))
    if new != text:
        readme.write_text(new)
    return new != text


def _split_region(text: str) -> tuple[str, str, str]:
    """``(before, block, after)`` around the README markers (the markers belong to before and after)."""
    if text.count(README_BEGIN) != 1 or text.count(README_END) != 1:
        raise ValueError(f"the README must hold the lines {README_BEGIN!r} and {README_END!r} once each")
    head, rest = text.split(README_BEGIN + "\n", 1)
    block, tail = rest.split(README_END, 1)
    return head + README_BEGIN + "\n", block, README_END + tail


def replace_region(text: str, block: str) -> str:
    """``text`` with the block between the README markers replaced by ``block``."""
    head, _, tail = _split_region(text)
    return head + block + tail


def readme_region(text: str) -> str:
    """The generated block of a README (between the markers)."""
    return _split_region(text)[1]


def main(argv: list[str] | None = None) -> int:
    """``python -m warmbo.experiments.demo --update-readme README.md [--results RESULTS.json]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m warmbo.experiments.demo",
        description="Rewrite the README's demo table from a demo's results.json (run `warmbo demo` first).",
    )
    parser.add_argument("--update-readme", type=Path, required=True, metavar="README", help="The README.")
    parser.add_argument(
        "--results",
        type=Path,
        help=f"results.json of a demo run; stored as {README_SOURCE} beside the README "
        "(default: regenerate from that file).",
    )
    args = parser.parse_args(argv)
    changed = update_readme(args.update_readme, args.results)
    print(f"{args.update_readme}: {'table rewritten' if changed else 'table already up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
