"""What the "best" of a noisy study says (docs/optimizer.md, "Noisy measurements"): the best single
measurement against the model's posterior mean at it, and the setting the model ranks first, on
Branin (noise sd a tenth of its range) and Hartmann-3 (a fifth), 40 evaluations of the default
optimizer, seeds 0-7; and the fitted noise sd against the true one on the plain scale.

    python bench/noisy_best.py
"""

from __future__ import annotations

import numpy as np

import warmbo as wb
from warmbo.problems import branin, hartmann3


def main() -> None:
    for problem, fraction in [(branin(), 0.1), (hartmann3(), 0.2)]:
        lo, hi = problem.lower, problem.upper
        sample = problem(lo + (hi - lo) * np.random.default_rng(123).random((20000, problem.dim)))
        sd = fraction * float(sample.max() - sample.min())
        space = wb.Space.box(list(zip(lo, hi, strict=True)))
        names = space.names

        def f(params, problem=problem, names=names):
            return float(problem(np.array([params[n] for n in names])))

        rows, ratios = [], []
        for seed in range(8):
            for transform in ("yeo-johnson", "none"):
                rng = np.random.default_rng(1000 + seed)
                opt = wb.Optimizer(space, seed=seed, output_transform=transform)
                best = opt.run(lambda p: f(p) + sd * rng.standard_normal(), budget=40, progress=False)  # noqa: B023
                if transform == "none":
                    model = opt.fit_model()
                    ratios.append(float(np.sqrt(model.noise_level_) * model.y_std_ / sd))
                    continue
                complete = [t for t in opt.history if t.state == "complete"]
                mean, _ = opt.predict([t.params for t in complete])
                i = next(k for k, t in enumerate(complete) if t.params == best.params)
                j = int(np.argmin(mean))
                there = f(best.params)
                rows.append((best.value - there, mean[i] - there, there, f(complete[j].params)))
        r = np.median(np.array(rows), axis=0)
        print(
            f"{problem.name} (noise sd {sd:.3g}): best measured minus the objective there {r[0]:.3g}, the "
            f"model's mean there minus it {r[1]:.3g}; objective at the best measured setting {r[2]:.3g}, "
            f"at the model's first {r[3]:.3g} (medians); fitted noise sd / true sd "
            f"{', '.join(f'{v:.2f}' for v in ratios)}"
        )


if __name__ == "__main__":
    main()
