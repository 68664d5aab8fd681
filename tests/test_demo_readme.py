"""The README's demo table is generated from stored demo results, never typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warmbo.experiments.demo import (
    README_BEGIN,
    README_END,
    README_SOURCE,
    main,
    readme_block,
    readme_region,
    update_readme,
)

ROOT = Path(__file__).resolve().parents[1]

RESULTS = {
    "settings": {
        "runs": 3,
        "seeds": [0, 1, 2],
        "quick": False,
        "branin": {"budget": 30, "n_initial": 5, "optimum": 0.0},
        "multi-task (001): R_C(t)/t": {"budget": 7, "n_initial": 0, "optimum": None},
    },
    "summary": [
        {
            "problem": "branin",
            "method": "GP-UCB",
            "median_final_regret": 0.069123,
            "q25": 0.0302,
            "q75": 0.09,
            "runs": 3,
        },
        {
            "problem": "multi-task (001): R_C(t)/t",
            "method": "MT-KB",
            "median_final_regret": 1.2e-7,
            "q25": 8.049e-8,
            "q75": 136.4,
            "runs": 3,
        },
    ],  # fmt: skip
    "seconds": 33.6,
    "problems": {"branin": {"GP-UCB": [[1.0, 0.5]] * 3}},
}

EXPECTED = """\
Final regret, median and interquartile range over 3 runs per method (seeds 0 to 2; `warmbo demo` in 34 s):

```
problem                     evals  method  median regret  IQR
branin                      30     GP-UCB  0.0691         [0.0302, 0.09]
multi-task (001): R_C(t)/t  7      MT-KB   1.2e-07        [8.05e-08, 136]
```
"""


def test_the_readme_table_is_exactly_the_one_generated_from_its_results_file():
    readme = (ROOT / "README.md").read_text()
    source = json.loads((ROOT / README_SOURCE).read_text())
    assert readme_region(readme) == readme_block(source)
    assert f"over {source['settings']['runs']} runs per method" in readme_region(readme)


def test_the_block_states_runs_and_seeds_and_aligns_the_columns():
    assert readme_block(RESULTS) == EXPECTED
    quick = json.loads(json.dumps(RESULTS))
    quick["settings"].update(runs=2, seeds=[0, 1], quick=True)
    for row in quick["summary"]:
        row["runs"] = 2
    assert "over 2 runs per method (seeds 0, 1; `warmbo demo --quick` in 34 s)" in readme_block(quick)
    quick["summary"][0]["runs"] = 5
    with pytest.raises(ValueError, match="runs"):
        readme_block(quick)


def test_update_readme_rewrites_only_the_region_and_stores_its_source(tmp_path):
    readme = tmp_path / "README.md"
    before, after = "# title\n\nprose before\n", "\nprose after\n"
    readme.write_text(f"{before}{README_BEGIN}\nhand-typed 1.73\n{README_END}{after}")
    results = tmp_path / "warmbo-demo" / "results.json"
    results.parent.mkdir()
    results.write_text(json.dumps(RESULTS))
    assert main(["--update-readme", str(readme), "--results", str(results)]) == 0
    assert readme.read_text() == f"{before}{README_BEGIN}\n{EXPECTED}{README_END}{after}"
    stored = json.loads((tmp_path / README_SOURCE).read_text())
    assert "problems" not in stored  # the traces stay in the run's folder
    assert readme_block(stored) == EXPECTED
    assert update_readme(readme) is False  # from the stored source: the same table


def test_update_readme_refuses_a_readme_without_exactly_one_region(tmp_path):
    readme = tmp_path / "README.md"
    (tmp_path / README_SOURCE).parent.mkdir()
    (tmp_path / README_SOURCE).write_text(json.dumps(RESULTS))
    for text in ("no markers\n", f"{README_BEGIN}\n{README_END}\n{README_BEGIN}\n{README_END}\n"):
        readme.write_text(text)
        with pytest.raises(ValueError, match="once each"):
            update_readme(readme)
        assert readme.read_text() == text
