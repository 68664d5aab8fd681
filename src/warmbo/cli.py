"""The ``warmbo`` command line (typer + rich)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(add_completion=False, help="warmbo: Bayesian optimization that does not start cold.")
console = Console()


@app.callback()
def main() -> None:
    """warmbo: Bayesian optimization that does not start cold."""


@app.command()
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
    console.print(f"wrote {out / 'results.json'} and {out / 'regret.png'} in {result.seconds:.1f} s")


if __name__ == "__main__":
    app()
