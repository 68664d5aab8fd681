"""The registry of reproductions behind ``warmbo reproduce`` (warmbo.experiments.registry)."""

import pytest

from warmbo.experiments.registry import REPRODUCTIONS, reproduction


@pytest.mark.parametrize("name", sorted(REPRODUCTIONS))
def test_every_reproduction_names_a_run_function_and_a_summary(name):
    entry = reproduction(name)
    module = entry._module()
    assert callable(getattr(module, entry.run_function))
    assert callable(module.summary)
    assert entry.sizes(None) == {}
    assert all(value == 3 for value in entry.sizes(3).values()) and entry.sizes(3)
    assert set(entry.option_names) <= set(entry.options)


def test_unknown_reproduction_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown experiment 'nope'; choose one of metakel, multitask"):
        reproduction("nope")


def test_a_registry_keeps_order_refuses_a_name_twice_and_names_the_choices():
    from warmbo._registry import Registry

    reg: Registry[int] = Registry("widget")
    assert reg.register("b", 2) == 2 and reg.register("a", 1) == 1
    assert list(reg) == ["b", "a"] and len(reg) == 2 and reg["a"] == 1 and dict(reg) == {"b": 2, "a": 1}
    with pytest.raises(ValueError, match="a widget named 'a' is already registered"):
        reg.register("a", 3)
    assert reg["a"] == 1  # the refused entry did not replace the first
    with pytest.raises(ValueError, match="unknown widget 'c'; choose one of b, a"):
        reg.lookup("c")
    with pytest.raises(ValueError, match="non-empty name"):
        reg.register("", 0)


def test_an_unknown_name_is_told_the_name_it_looks_like():
    # a user test: transfer="rgbe" was told only the list of choices
    import warmbo as wb
    from warmbo.transfer.registry import TRANSFER_METHODS

    assert TRANSFER_METHODS.unknown("RGPE").startswith(
        "unknown transfer 'RGPE' (did you mean 'rgpe'?); choose"
    )
    assert "(did you mean" not in TRANSFER_METHODS.unknown("zzz")
    prior = ([{"x0": 0.1}, {"x0": 0.2}], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"unknown transfer 'rgbe' \(did you mean 'rgpe'\?\)"):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), transfer="rgbe", prior=prior)


def test_the_four_registries_are_one_kind():
    from warmbo._registry import Registry
    from warmbo.benchmarks import SECTIONS
    from warmbo.experiments.demo import PANELS
    from warmbo.transfer.registry import TRANSFER_METHODS, transfer_model

    for registry in (SECTIONS, REPRODUCTIONS, PANELS, TRANSFER_METHODS):
        assert isinstance(registry, Registry) and len(registry) >= 3
    assert list(PANELS)[:2] == ["branin", "hartmann6"]  # the README table's order
    with pytest.raises(ValueError, match="unknown transfer 'magic'"):
        transfer_model("magic", None)
    with pytest.raises(ValueError, match="builds no model"):
        transfer_model("none", None)


def test_demo_runs_only_the_panels_asked_for(tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["demo", "--quick", "--panel", "branin", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    import json

    data = json.loads((tmp_path / "results.json").read_text())
    assert list(data["problems"]) == ["branin"]
    assert {row["method"] for row in data["summary"]} == {"GP-UCB", "GP-EI", "random"}
    bad = runner.invoke(app, ["demo", "--quick", "--panel", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 1 and "unknown demo panel 'nope'" in bad.output
    assert not (tmp_path / "x").exists()  # nothing ran


def test_the_demo_multitask_panel_sets_its_reference_point_below_every_noisy_observation():
    # at 0.1 below each task's minimum, noise 0.5 took observations under it and the demo printed
    # ReferencePointWarning at its users; a warning is an error here, over the full demo's 5 seeds
    import warnings

    from warmbo.experiments.demo import multitask_run
    from warmbo.multitask_optimizer import ReferencePointWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferencePointWarning)
        for seed in range(5):
            for method in ("MT-KB", "IT-KB"):
                assert multitask_run(method, 30, seed)[-1] > 0.0
