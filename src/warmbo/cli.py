"""The ``warmbo`` command line (typer + rich).

Commands: ``demo``, ``optimize``, ``suggest``, ``observe``, ``status``, ``report``, ``reproduce``.
Errors are one line on standard error with exit status 1 (no traceback unless ``--debug``); usage
errors exit 2.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="warmbo: Bayesian optimization that does not start cold.",
)
console = Console()
errors = Console(stderr=True)
_STATE = {"debug": False}

StorageOption = Annotated[
    str, typer.Option("--storage", "-s", help="Study URL: study.db or sqlite:///study.db.")
]


def _fail(message: str) -> None:
    errors.print(f"[bold red]error:[/bold red] {message}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(1)


def friendly(command):
    """Turn expected exceptions into one clear line and exit status 1 (tracebacks with --debug)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except (ValueError, KeyError, OSError, RuntimeError, sqlite3.Error) as exc:
            if _STATE["debug"]:
                raise
            _fail(str(exc) if not isinstance(exc, KeyError) else str(exc.args[0]))

    return wrapper


@app.callback()
def main(debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False) -> None:
    """warmbo: Bayesian optimization that does not start cold."""
    _STATE["debug"] = debug


# ---------------------------------------------------------------------------------------------- helpers
def load_space(path: Path):
    """Read a search space from a JSON file: ``{"params": [...]}`` or a bare list of parameters.

    Each parameter is ``{"type": "float"|"int"|"categorical", "name": ..., "low": ..., "high": ...,
    "log": false}`` or ``{"type": "categorical", "name": ..., "choices": [...]}``.
    """
    from .space import Space

    if not path.is_file():
        raise ValueError(f"space file {str(path)!r} does not exist")
    text = path.read_text()
    if not text.strip():
        raise ValueError(f"space file {str(path)!r} is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"space file {str(path)!r}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    if isinstance(data, list):
        data = {"params": data}
    if not isinstance(data, dict) or not isinstance(data.get("params"), list):
        raise ValueError(f'space file {str(path)!r} must hold a list of parameters or {{"params": [...]}}')
    data.setdefault("candidate_points", None)
    try:
        return Space.from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"space file {str(path)!r}: {exc}") from None


def _params_table(title: str, rows, names) -> Table:
    table = Table(title=title)
    table.add_column("trial", justify="right")
    for name in names:
        table.add_column(name)
    for trial_id, params in rows:
        table.add_row(str(trial_id), *(_fmt(params[name]) for name in names))
    return table


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _trials_table(optimizer, limit: int | None = None) -> Table:
    names = optimizer.space.names
    trials = list(optimizer.history)
    table = Table(title=f"{len(trials)} trials ({'maximize' if optimizer.maximize else 'minimize'})")
    for column in ("trial", "state", "value", *names, "worker"):
        table.add_column(column, justify="right" if column in ("trial", "value") else "left")
    shown = trials if limit is None else trials[-limit:]
    styles = {"complete": "", "pending": "yellow", "failed": "red"}
    for t in shown:
        value = "" if t.value is None else f"{t.value:.6g}"
        table.add_row(
            str(t.id),
            t.state,
            value,
            *(_fmt(t.params[n]) for n in names),
            t.worker or "",
            style=styles[t.state],
        )
    return table


def _print_best(optimizer) -> None:
    best = optimizer.best
    if best is None:
        console.print("no complete trials yet")
        return
    params = ", ".join(f"{k}={_fmt(v)}" for k, v in best.params.items())
    console.print(f"[bold]best[/bold] {best.value:.6g} at {params}")


# ---------------------------------------------------------------------------------------------- commands
@app.command()
@friendly
def demo(
    quick: Annotated[bool, typer.Option("--quick", help="Fewer runs and evaluations (under 20 s).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Folder for the plots and results.")] = Path(
        "warmbo-demo"
    ),
) -> None:
    """GP-UCB and GP-EI against random search on Branin and Hartmann-6: a table, JSON and plots."""
    from .experiments.demo import run_demo

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
        result = run_demo(out, quick=quick, progress=progress)
    table = Table(title=f"Simple regret after the budget (median [IQR] over {result.settings['runs']} runs)")
    for column in ("problem", "evaluations", "method", "median regret", "IQR"):
        table.add_column(column)
    for row in result.summary():
        budget = result.settings[row["problem"]]["budget"]
        iqr = f"[{row['q25']:.3g}, {row['q75']:.3g}]"
        table.add_row(row["problem"], str(budget), row["method"], f"{row['median_final_regret']:.3g}", iqr)
    console.print(table)
    console.print(
        f"wrote {out / 'report.html'}, {out / 'results.json'} and {out / 'regret.png'} "
        f"in {result.seconds:.1f} s"
    )


@app.command()
@friendly
def optimize(
    objective: Annotated[
        str | None, typer.Argument(help="Objective as module:function (called with a dict of parameters).")
    ] = None,
    cmd: Annotated[
        str | None, typer.Option("--cmd", help='Command template, e.g. "python train.py --lr {lr}".')
    ] = None,
    space_file: Annotated[
        Path | None, typer.Option("--space", help="JSON file describing the space.")
    ] = None,
    budget: Annotated[
        int, typer.Option("--budget", "-n", help="Total number of finished trials.", min=0)
    ] = 20,
    storage: Annotated[
        str | None, typer.Option("--storage", "-s", help="Study URL (resumed if it exists).")
    ] = None,
    prior: Annotated[
        Path | None, typer.Option("--prior", help="CSV of earlier evaluations to start from.")
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="How --prior is used: gp (told as trials of this study) or a transfer model "
            "(envelope, generic, efficient, collaborative, diff, rgpe) with the prior as source task(s).",
        ),
    ] = "gp",
    task: Annotated[
        str | None, typer.Option("--task", help="Column of the prior CSV naming the source task of each row.")
    ] = None,
    maximize: Annotated[bool, typer.Option("--maximize", help="Maximise instead of minimise.")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed.")] = None,
    workers: Annotated[int, typer.Option("--workers", help="Concurrent evaluations.", min=1)] = 1,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per --cmd evaluation.")] = None,
) -> None:
    """Optimise an objective; every result is stored before the next point is chosen."""
    from .data import TaskData
    from .objective import CommandObjective, load_callable
    from .optimizer import Optimizer, TrialFailedWarning
    from .storage import Study, parse_url

    if (objective is None) == (cmd is None):
        raise ValueError("give exactly one objective: a module:function argument or --cmd")
    exists = storage is not None and parse_url(storage) != ":memory:" and Path(parse_url(storage)).is_file()
    if space_file is None:
        if not exists:
            raise ValueError("--space is required to create a new study")
        space = Study(storage).space
    else:
        space = load_space(space_file)
    fn = load_callable(objective) if objective else CommandObjective(cmd, space.names, timeout)
    models = transfer_models()
    if method != "gp" and method not in models:
        raise ValueError(f"unknown --method {method!r}; choose gp or one of {', '.join(sorted(models))}")
    if method != "gp" and prior is None:
        raise ValueError(f"--method {method} transfers from source data: give them with --prior FILE.csv")
    data = TaskData.from_csv(prior, space, task=task) if prior is not None else None
    model = None
    if method != "gp":
        # models see outputs in the maximisation convention, so a minimised source is negated too
        source = data if maximize else TaskData(data.params, -data.y, data.task, space, source=data.source)
        model = models[method](source=source, seed=seed)
    opt = Optimizer(space, model=model, maximize=maximize, seed=seed, storage=storage)
    if data is not None and method == "gp":
        digest = hashlib.sha256(prior.read_bytes()).hexdigest()[:16]
        added = opt.add_prior(data, tag=digest)
        console.print(
            f"imported {added} prior evaluations from {prior}" if added else f"{prior} already imported"
        )
    elif data is not None:
        console.print(f"transferring from {len(data)} source evaluations in {prior} with {method}")

    def report_failure(_, trial) -> None:
        if trial.is_failed:
            errors.print(f"[yellow]trial {trial.id} failed:[/yellow] {trial.error}", highlight=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrialFailedWarning)  # reported by the callback instead
        opt.run(
            fn, budget=budget, n_workers=workers, callbacks=[report_failure], progress=sys.stderr.isatty()
        )
    console.print(_trials_table(opt, limit=10))
    _print_best(opt)


@app.command()
@friendly
def suggest(
    storage: StorageOption,
    n: Annotated[int, typer.Option("-n", help="Number of points.", min=1)] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
) -> None:
    """Ask for the next experiment(s): stored as pending trials, reported back with `observe`."""
    from .optimizer import Optimizer

    opt = Optimizer.load(storage)
    suggestions = opt.ask(n)
    if as_json:
        for s in suggestions:
            typer.echo(json.dumps({"trial": s.trial_id, "params": dict(s)}))
        return
    console.print(_params_table("next experiments", [(s.trial_id, s) for s in suggestions], opt.space.names))
    console.print(f"report results with: warmbo observe --storage {storage} --trial ID --value V")


@app.command()
@friendly
def observe(
    storage: StorageOption,
    trial: Annotated[int, typer.Option("--trial", "-t", help="Trial id from `suggest`.")],
    value: Annotated[str | None, typer.Option("--value", "-v", help="Measured objective value.")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="Mark the trial failed instead.")] = False,
) -> None:
    """Report the result of a suggested experiment (or that it failed)."""
    from .optimizer import Optimizer
    from .storage import Study

    if failed == (value is not None):
        raise ValueError("give either --value V or --failed")
    study = Study(storage)
    opt = Optimizer(study.space, storage=storage, maximize=study.settings.get("direction") == "maximize")
    if failed:
        t = opt.tell_failed(trial, error="reported failed")
        console.print(f"trial {t.id} marked failed")
        return
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"--value must be a number, got {value!r}") from None
    t = opt.tell(trial, number)
    console.print(f"trial {t.id}: value {t.value:.6g} stored")
    _print_best(opt)


@app.command()
@friendly
def status(
    storage: StorageOption,
    last: Annotated[int | None, typer.Option("--last", help="Show only the last N trials.")] = None,
) -> None:
    """Show the trials of a study as a table, and the best one."""
    from .optimizer import Optimizer

    opt = Optimizer.load(storage)
    console.print(_trials_table(opt, limit=last))
    counts = {s: opt.study.count(s) for s in ("complete", "pending", "failed")}
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    _print_best(opt)


@app.command()
@friendly
def report(
    storage: Annotated[str, typer.Argument(help="Study URL.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: <study>-report).")
    ] = None,
) -> None:
    """Write an HTML report (self-contained, plots embedded) and PNGs for a study."""
    from .optimizer import Optimizer
    from .report import write_report
    from .storage import parse_url

    opt = Optimizer.load(storage)
    out = out or Path(Path(parse_url(storage)).stem + "-report")
    path = write_report(
        out,
        opt.space,
        list(opt.history),
        maximize=opt.maximize,
        title=f"warmbo study {storage}",
        predict=study_predictor(opt),
    )
    console.print(f"wrote {path}")


_REPRODUCTIONS = ("metakel", "multitask", "envelope", "tuned-prior")


@app.command()
@friendly
def reproduce(
    experiment: Annotated[
        str, typer.Argument(help=f"Which paper's experiments: one of {', '.join(_REPRODUCTIONS)}.")
    ],
    runs: Annotated[
        int | None,
        typer.Option("--runs", help="Runs of every experiment (default: the paper's numbers).", min=1),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Processes running the runs.", min=1)] = 1,
    quick: Annotated[bool, typer.Option("--quick", help="A few small runs to check the pipeline.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw.", min=0)] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: warmbo-reproduce/EXPERIMENT).")
    ] = None,
    parts: Annotated[
        list[str] | None,
        typer.Option("--parts", help="multitask only: parts to run (rkhs, sine, branin, sensor, timing)."),
    ] = None,
) -> None:
    """Reproduce a paper's experiments: a summary table, results.json, PNG plots and report.html."""
    if experiment not in _REPRODUCTIONS:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of {', '.join(_REPRODUCTIONS)}")
    if parts and experiment != "multitask":
        raise ValueError("--parts applies to the multitask reproduction only")
    if experiment == "multitask":
        _reproduce_multitask(runs, workers, quick, seed, out or Path("warmbo-reproduce") / experiment, parts)
        return
    if experiment == "envelope":
        from .experiments.envelope import run_envelope

        out = out or Path("warmbo-reproduce") / experiment
        sizes = {} if runs is None else {"repeats": runs, "hpo_repeats": runs}
        columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"))
        with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
            result = run_envelope(out, workers=workers, quick=quick, progress=progress, seed=seed, **sizes)
        head = result.headline()
        table = Table(title="Envelope-BO (003): iterations to 95% of the target's maximum (median [IQR])")
        table.add_column("case / acquisition")
        for method in result.methods:
            table.add_column(method, justify="right")
        for key, row in head["iterations_to_95"].items():
            table.add_row(key, *(row.get(m, "").split(",")[0] for m in result.methods))
        console.print(table)
        noise = ", ".join(f"{k}: {v:.3f}" for k, v in head["final_source_noise"].items())
        console.print(f"Envelope-BO's final learned source noise: {noise}")
        for note in result.settings.get("notes", []):
            console.print(note)
        console.print(f"Wrote {out / 'results.json'}, the PNG plots and {out / 'report.html'}")
        return
    if experiment == "tuned-prior":
        from .experiments.tuned_prior import run_tuned_prior

        out = out or Path("warmbo-reproduce") / experiment
        sizes = {} if runs is None else {"runs": runs}
        columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"))
        with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
            result = run_tuned_prior(out, workers=workers, quick=quick, progress=progress, seed=seed, **sizes)
        head = result.headline()
        arms = list(result.arms)
        table = Table(title="Tuned prior (004): simple regret at the last iteration (mean ± sd)")
        table.add_column("function")
        for arm in arms:
            table.add_column(arm, justify="right")
        for fn, row in head["final_regret"].items():
            table.add_row(fn, *(f"{row[a]['mean']:.3f} ± {row[a]['sd']:.3f}" for a in arms))
        console.print(table)
        for acq, entry in head["comparisons"].items():
            wins = entry["tuned_prior_beats_plain"]
            console.print(
                f"{acq}: tuned prior beats plain BO on {len(wins)} of {entry['of']} ({', '.join(wins)})"
            )
        console.print(f"wrote {out / 'results.json'}, the PNG plots and {out / 'report.html'}")
        return
    from .experiments.metakel import run_metakel

    out = out or Path("warmbo-reproduce") / experiment
    parts = ("calibration", "regret", "lambda", "support")
    sizes = {} if runs is None else {f"runs_{part}": runs for part in parts}
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
        result = run_metakel(out, workers=workers, quick=quick, progress=progress, seed=seed, **sizes)
    head = result.headline()
    cal = result.calibration
    table = Table(title="Meta-KeL (000): calibration over runs, GP-UCB regret over instances (means)")
    for column in ("kernel", "coverage a=.5/.8/.9/.95", "sharpness", "r_T", "R_T"):
        table.add_column(column, justify="left" if column == "kernel" else "right")
    for name in dict.fromkeys([*cal.kernels, *result.regret.kernels]):
        coverage = head["coverage"].get(name)
        final = head["regret_final"].get(name)
        table.add_row(
            name,
            " ".join(f"{v:.2f}" for v in coverage.values()) if coverage else "",
            f"{cal.sharpness_mean[name]:.3g}" if coverage else "",
            f"{final['simple']:.3g}" if final else "",
            f"{final['cumulative']:.3g}" if final else "",
        )
    console.print(table)
    lambdas = ", ".join(f"{k}: {row['cumulative']:.3g}" for k, row in head["lambda_final"].items())
    console.print(f"R_T of k_hat by lambda (Fig. 8): {lambdas}")
    recovery = "; ".join(
        f"lambda {rule}: J_hat = J* in {row['exact']:.0%}, J_hat ⊇ J* in {row['superset']:.0%}"
        for rule, row in head["support_at_largest_mn"].items()
    )
    largest = f"m = {max(result.support.ms)}, n = {max(result.support.ns)}"
    console.print(f"support recovery at {largest}: {recovery}")
    seconds = result.seconds["total"]
    console.print(f"wrote {out / 'report.html'}, {out / 'results.json'} and 4 PNG plots in {seconds:.1f} s")


def _reproduce_multitask(runs, workers, quick, seed, out: Path, parts) -> None:
    """``warmbo reproduce multitask``: 001's Figs. 1-3 and the timing study (warmbo.experiments.multitask)."""
    from .experiments.multitask import run_multitask

    selected = [p.strip() for item in parts for p in item.split(",") if p.strip()] if parts else None
    sizes = {} if runs is None else {"runs": runs}
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
        result = run_multitask(
            out, workers=workers, quick=quick, progress=progress, seed=seed, parts=selected, **sizes
        )
    head = result.headline()
    algorithms = ("MT-KB", "MT-BKB", "IT-KB", "IT-BKB", "MOBO", "MOBO (GP-UCB beta)")
    table = Table(title="Multi-task BO (001): R_C(T)/T at the last T (mean ± sd over trials)")
    table.add_column("problem")
    for a in algorithms:
        table.add_column(a, justify="right")
    for key, row in head["final_average_regret"].items():
        cells = (f"{row[a]['mean']:.3g} ± {row[a]['sd']:.2g}" if a in row else "" for a in algorithms)
        table.add_row(key, *cells)
    console.print(table)
    for key, ratio in head["ratios"].items():
        console.print(f"{key}: MT-KB / IT-KB of R_C(T)/T at T = {ratio['T']}: {ratio['MT-KB / IT-KB']:.3f}")
    for arm, entry in head.get("timing", {}).items():
        slope = entry["loglog_slope_second_half"]
        slope_text = "n/a" if slope is None else f"{slope:.2f}"
        console.print(f"timing {arm}: {entry['steps']} steps, log-log slope of step time vs t {slope_text}")
    for note in result.notes:
        console.print(note)
    console.print(f"wrote {out / 'results.json'} and the PNG plots in {result.seconds['total']:.1f} s")


def transfer_models() -> dict:
    """Transfer models selectable with ``--method``: name -> class taking ``source=`` and ``seed=``."""
    from .transfer.envelope import Envelope

    models = {"envelope": Envelope}
    try:
        from .transfer.baselines import BASELINES
    except ImportError:  # the baselines module is optional while it is being written
        BASELINES = {}
    models.update(BASELINES)
    return models


def study_predictor(opt):
    """``predict(U) -> (mean, std)`` on the user's sign for reports, or None before 2 complete trials."""
    model = opt.fit_model()
    if model is None:
        return None

    def predict(U):
        mean, std = model.predict(U)
        return (mean if opt.maximize else -mean), std

    return predict


if __name__ == "__main__":
    app()
