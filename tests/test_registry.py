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
