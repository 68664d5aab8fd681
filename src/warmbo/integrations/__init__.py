"""Adapters to the tools users already run their tuning with; each module imports its tool and is an
optional extra, so ``import warmbo`` imports none of them.

- :mod:`warmbo.integrations.optuna`: ``WarmboSampler``, an Optuna sampler (``pip install warmbo[optuna]``);
- :mod:`warmbo.integrations.ray`: ``WarmboSearch``, a Ray Tune searcher (``pip install warmbo[ray]``);
- :mod:`warmbo.integrations.sklearn`: ``WarmboSearchCV``, scikit-learn's hyperparameter search with
  warmbo choosing the candidates (scikit-learn is a core dependency: nothing to install).

Dask needs no adapter: ``Optimizer.run(objective, budget, n_workers, executor=client.get_executor())``
(``pip install warmbo[dask]``; see docs/scale.md).
"""
