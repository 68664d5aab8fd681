"""Transfer as an Optimizer argument: ``Optimizer(space, prior=..., transfer=...)`` (warmbo.prior,
warmbo.transfer.registry). Sources are given in the user's own units and signed like the study's trials."""

from __future__ import annotations

import copy
import json
import re
import warnings

import numpy as np
import pytest

import warmbo as wb
from warmbo.data import DataError
from warmbo.prior import PriorOutsideSpaceWarning, PriorParametersDroppedWarning

SPACE = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])


def bowl(p) -> float:  # minimised at (1, -0.5)
    return (p["x"] - 1.0) ** 2 + (p["y"] + 0.5) ** 2


def source(n=30, seed=0):
    X = np.random.default_rng(seed).uniform(-3, 3, (n, 2))
    return X, np.array([bowl({"x": a, "y": b}) for a, b in X])


@pytest.mark.parametrize("method", ["envelope", "rgpe", "diff", "efficient", "collaborative"])
def test_a_minimised_study_with_a_raw_source_ranks_the_sources_best_points_best(method):
    # Before, Optimizer(space, model=Envelope(source=(X, y))) on a minimised study transferred an
    # upside-down prior; now the optimizer signs the source like its own trials.
    X, y = source()
    opt = wb.Optimizer(SPACE, prior=(X, y), transfer=method, seed=0, n_initial=2)
    for _ in range(2):
        p = opt.ask()
        opt.tell(p, bowl(p))
    mean, _ = opt.predict([{"x": a, "y": b} for a, b in X])  # user's sign: low is good
    best_three = set(np.argsort(y)[:3])
    assert int(np.argmin(mean)) in best_three
    # and the model ranks the source the right way round overall
    assert np.corrcoef(mean, y)[0, 1] > 0.9


def test_prior_without_transfer_is_told_once_as_trials(tmp_path):
    X, y = source(8)
    url = str(tmp_path / "s.db")
    opt = wb.Optimizer(SPACE, prior=(X, y), seed=0, storage=url, transfer="none")
    assert len(opt.history) == 8 and all(t.worker == "prior" for t in opt.history)
    assert opt.best.value == pytest.approx(y.min())
    opt.study.close()
    again = wb.Optimizer(SPACE, prior=(X, y), seed=0, storage=url, transfer="none")
    assert len(again.history) == 8  # same prior, same study: nothing added


def test_prior_forms_csv_dicts_and_finished_studies(tmp_path):
    X, y = source(12)
    csv = tmp_path / "prior.csv"
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    csv.write_text("a,b,y\n" + "".join(f"{a},{b},{v}\n" for (a, b), v in zip(X, y, strict=True)))
    from_csv = wb.Optimizer(space, prior=str(csv), seed=0, transfer="none")
    from_dicts = wb.Optimizer(space, prior=([{"a": a, "b": b} for a, b in X], y), seed=0, transfer="none")
    assert [t.value for t in from_csv.history] == pytest.approx(list(y))
    assert [t.params for t in from_csv.history] == [t.params for t in from_dicts.history]

    # a finished study that MAXIMISED -y is the same information as a minimised y
    finished = str(tmp_path / "finished.db")
    old = wb.Optimizer(space, maximize=True, seed=1, storage=finished)
    for (a, b), v in zip(X, y, strict=True):
        old.tell({"a": a, "b": b}, -v)
    old.study.close()
    opt = wb.Optimizer(space, prior=[finished], transfer="rgpe", seed=0, n_initial=2)
    assert opt.prior.y == pytest.approx(y)  # read in the new (minimised) study's sense
    for _ in range(2):
        p = opt.ask()
        opt.tell(p, (p["a"] - 1.0) ** 2 + (p["b"] + 0.5) ** 2)
    mean, _ = opt.predict([{"a": a, "b": b} for a, b in X])
    assert int(np.argmin(mean)) in set(np.argsort(y)[:3])


def test_bad_prior_and_transfer_arguments_are_clear_errors(tmp_path):
    X, y = source(5)
    with pytest.raises(ValueError, match="unknown transfer 'magic'"):
        wb.Optimizer(SPACE, prior=(X, y), transfer="magic")
    with pytest.raises(ValueError, match="give them with prior="):
        wb.Optimizer(SPACE, transfer="envelope")
    with pytest.raises(ValueError, match="either model="):
        wb.Optimizer(SPACE, prior=(X, y), transfer="rgpe", model=wb.GP(wb.kernels.RBF(0.3)))
    with pytest.raises(DataError, match="prior must be"):
        wb.Optimizer(SPACE, prior=42)
    with pytest.raises(DataError):
        wb.Optimizer(SPACE, prior=(X[:, :1], y))  # wrong width
    other = str(tmp_path / "other.db")
    wb.Optimizer(wb.Space([wb.Float("z", 0.0, 1.0)]), storage=other).study.close()
    with pytest.raises(DataError, match=r"other parameters than this study: parameter 'x' only in"):
        wb.Optimizer(SPACE, prior=[other], transfer="rgpe")


@pytest.mark.parametrize("transfer", ["none", "rgpe"])
def test_a_prior_study_may_have_wider_or_narrower_bounds_when_its_trials_fit(tmp_path, transfer):
    # before: a finished study was refused as a prior as soon as its space differed in anything, so
    # the first thing a user does after a study (widen the range its best point sat on the edge of)
    # lost it, though its own CSV export, `warmbo export`, was accepted for the same space
    first = wb.Space([wb.Float("x", 0.0, 1.0), wb.Categorical("c", ["a", "b"]), wb.Int("k", 1, 3)])
    old = wb.Optimizer(first, storage=tmp_path / "old.db", seed=0, maximize=True)
    for x, c, k in [(0.2, "a", 1), (0.9, "b", 3), (1.0, "a", 2)]:
        old.tell({"x": x, "c": c, "k": k}, x + k)
    old.study.close()
    wider = wb.Space([wb.Int("k", 1, 5), wb.Float("x", -1.0, 2.0), wb.Categorical("c", ["a", "b", "z"])])
    opt = wb.Optimizer(wider, prior=[str(tmp_path / "old.db")], transfer=transfer, seed=0)
    assert sorted(p["x"] for p in opt.prior.params) == [0.2, 0.9, 1.0]
    assert sorted(opt.prior.y) == pytest.approx([-3.9, -3.0, -1.2])  # maximised there, minimised here
    if transfer == "none":
        assert sorted(t.value for t in opt.history) == pytest.approx([-3.9, -3.0, -1.2])
    # a range narrowed since (the user's next step after a first study found the good region): the
    # trials inside are read, the ones outside left out with a warning that counts them. Before, the
    # whole study was refused, though the message of a changed space advised exactly this prior
    narrower = wb.Space([wb.Float("x", 0.0, 0.95), wb.Categorical("c", ["a", "b"]), wb.Int("k", 1, 3)])
    with pytest.warns(
        PriorOutsideSpaceWarning,
        match=r"1 of its 3 complete trials lie outside this study's space and are left out \(trial 3: "
        r"parameter 'x': value 1.0 is outside \[0.0, 0.95\]\)",
    ) as caught:
        opt = wb.Optimizer(narrower, prior=[str(tmp_path / "old.db")], transfer=transfer, seed=0)
    assert caught[0].filename == __file__  # it points at the caller's line, not into warmbo
    assert sorted(p["x"] for p in opt.prior.params) == [0.2, 0.9]
    if transfer == "none":
        assert sorted(t.value for t in opt.history) == pytest.approx([-3.9, -1.2])
    opt.ask()  # the model works on the rows kept
    only_b = wb.Space([wb.Float("x", 0.0, 0.5), wb.Categorical("c", ["b"]), wb.Int("k", 1, 3)])
    with pytest.raises(
        DataError, match=r"none of its 3 complete trials lies in this study's space \(trial 1: .*'c'"
    ):
        wb.Optimizer(only_b, prior=[str(tmp_path / "old.db")], transfer=transfer)
    # a parameter removed since: a transfer method reads the trials on the shared parameters, as a
    # related task it weighs (a newcomer user test met a refusal, and a DataFrame of the same trials
    # was read as it stands); taken as this study's own trials (transfer="none") they are refused,
    # with the filter that keeps the trials at the value it is held at now
    fewer = wb.Space([wb.Float("x", 0.0, 1.0), wb.Categorical("c", ["a", "b"])])
    if transfer == "none":
        with pytest.raises(
            DataError, match=r"parameter 'k' only in the prior study.*df\[\(df\['k'\] == VALUE\)\]"
        ):
            wb.Optimizer(fewer, prior=[str(tmp_path / "old.db")], transfer=transfer)
    else:
        with pytest.warns(
            PriorParametersDroppedWarning, match=r"has parameters this study has not \(k\)"
        ) as said:
            opt = wb.Optimizer(fewer, prior=[str(tmp_path / "old.db")], transfer=transfer, seed=0)
        assert said[0].filename == __file__
        assert sorted(p["x"] for p in opt.prior.params) == [0.2, 0.9, 1.0]
        assert set(opt.prior.params[0]) == {"x", "c"}
        opt.tell(opt.ask(), 1.0)  # (the model works on the rows read)


def test_prior_subset_keeps_the_best_quarter_and_a_seeded_sample():
    from warmbo.prior import prior_subset

    values = np.random.default_rng(1).random(400)
    keep = prior_subset(values, 40, seed=3)
    assert keep.size == 40 and np.all(np.diff(keep) > 0)
    assert set(np.argsort(-values)[:10]) <= set(keep)  # the 10 best (a quarter of 40)
    np.testing.assert_array_equal(keep, prior_subset(values, 40, seed=3))
    np.testing.assert_array_equal(prior_subset(values, 500, seed=3), np.arange(400))


def test_a_large_prior_is_subsampled_for_the_model_with_a_warning():
    X, y = source(300)
    with pytest.warns(wb.optimizer.PriorSubsetWarning, match="uses 40 of the 300 prior rows") as caught:
        opt = wb.Optimizer(SPACE, prior=(X, y), transfer="rgpe", max_prior=40, seed=0)
    assert caught[0].filename == __file__  # it points at the caller's line, not into warmbo
    # (it said "Raise max_prior=", an option a command-line user, who sees it too, did not have;
    # then that the command line keeps the default: it has --max-prior now)
    assert "max_prior= in Python" in str(caught[0].message) and "--max-prior N" in str(caught[0].message)
    assert len(opt.model.source) == 40  # the transfer model's source data
    told = wb.Optimizer(SPACE, prior=(X, y), max_prior=40, seed=0, transfer="none")
    assert len(told.history) == 300  # every row is stored
    with pytest.warns(wb.optimizer.PriorSubsetWarning):
        model = told.fit_model()
    assert model.n_observations == 40


MIXED = wb.Space(
    [wb.Float("lr", 1e-4, 1.0, log=True), wb.Int("depth", 1, 8), wb.Categorical("kind", ["a", "b"])]
)


def mixed_sources(seed=0):
    """Two related sources on a mixed space, minimised at small depth, lr near 0.01 and kind 'b'."""
    rng = np.random.default_rng(seed)
    params, values, tasks = [], [], []
    for task, shift in (("run1", 0.0), ("run2", 0.3)):
        for _ in range(20):
            p = {
                "lr": float(10 ** rng.uniform(-4, 0)),
                "depth": np.int64(rng.integers(1, 9)),  # numpy scalars, as a DataFrame gives them
                "kind": str(rng.choice(["a", "b"])),
            }
            values.append((np.log10(p["lr"]) + 2) ** 2 + 0.1 * p["depth"] + (p["kind"] == "a") + shift)
            params.append(p)
            tasks.append(task)
    return wb.TaskData.from_records(params, values, MIXED, task=tasks, source="two runs")


def test_stored_sources_round_trip_exactly_and_refuse_damage():
    from warmbo.prior import digest, sources_from_text, sources_text

    data = mixed_sources()
    text = sources_text(data, {"transfer": "rgpe", "max_prior": 7})
    back, settings = sources_from_text(text, MIXED)
    assert back == data and digest(back) == digest(data) and back.source == "two runs"
    assert settings == {"transfer": "rgpe", "max_prior": 7}
    assert [type(p["depth"]) for p in back.params] == [int] * len(data)
    with pytest.raises(DataError, match="unreadable"):
        sources_from_text(text[: len(text) // 2], MIXED)  # a truncated write
    other = wb.Space([wb.Float("lr", 1e-4, 1.0, log=True), wb.Int("depth", 1, 8)])
    with pytest.raises(DataError, match="parameters"):
        sources_from_text(text, other)
    # the digest passed in is the one stored; a record compressed at another level (studies written
    # before session 16 used level 6) reads back the same
    assert sources_text(data, {"transfer": "rgpe"}, digest(data)) == sources_text(data, {"transfer": "rgpe"})
    import base64
    import zlib

    older = base64.b64encode(zlib.compress(zlib.decompress(base64.b64decode(text)), 6)).decode("ascii")
    assert older != text and sources_from_text(older, MIXED)[0] == data


def test_a_reopened_study_transfers_from_the_sources_it_stored(tmp_path):
    # Before, Optimizer.load(url) (and so `warmbo suggest`) reopened a transfer study without its
    # sources: the first ask of the reopened object was a cold Sobol point, not the warm design's.
    data = mixed_sources()
    url = str(tmp_path / "t.db")
    first = wb.Optimizer(MIXED, prior=data, transfer="rgpe", max_prior=25, seed=0, storage=url)
    warm = first.warm_design()
    assert len(warm) == 3  # two sources: three warm design points
    p = first.ask()
    first.tell(p, 1.0)
    first.study.close()

    again = wb.Optimizer.load(url)
    assert again.prior == data and again.transfer == "rgpe" and again.max_prior == 25
    assert again.n_initial == 3
    second = again.ask()  # the warm design's second point, as the first object would have asked
    np.testing.assert_allclose(MIXED.encode([dict(second)])[0], warm.points[1])
    again.study.close()

    # a new object given no prior asks without the sources, and says so at its first ask (a tell,
    # as `warmbo observe` makes, needs no sources and says nothing)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cold = wb.Optimizer(MIXED, storage=url)
        cold.tell(second, 2.0)
    with pytest.warns(UserWarning, match="stored sources"):
        cold.ask()
    assert cold.transfer == "none"
    cold.study.close()
    # overrides win: transfer="none" reopens without them, silently; another method keeps the sources
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = wb.Optimizer.load(url, transfer="none")
        plain.ask()
    assert plain.prior is None
    other = wb.Optimizer.load(url, transfer="diff")
    # another method reuses the sources with its own default cap on rows (diff pools them: 256)
    assert other.transfer == "diff" and other.prior == data and other.max_prior == 256


def test_damaged_stored_sources_are_a_clear_error_and_lose_no_trial(tmp_path):
    url = str(tmp_path / "t.db")
    opt = wb.Optimizer(MIXED, prior=mixed_sources(), seed=0, storage=url)
    for _ in range(2):
        opt.tell(opt.ask(), 0.5)
    opt.study.set_meta("transfer_source_rows", "not base64!")
    opt.study.close()
    with pytest.raises(DataError, match="stored transfer sources are unreadable.*prior="):
        wb.Optimizer.load(url)
    reopened = wb.Optimizer.load(url, transfer="none")
    assert [t.value for t in reopened.history] == [0.5, 0.5]


def test_a_reopened_study_reuses_its_stored_warm_design_and_source_fits(
    tmp_path, monkeypatch, likelihood_rows
):
    # The first model ask of a reopened transfer study paid for the warm design's k-d tree queries and
    # every source GP's ML-II fit again (50 sources x 300 rows: 1.65 s, docs/transfer.md); both are
    # stored with the study now. Checked by what the reopened object does not call.
    import warmbo.optimizer as optimizer_module

    data = mixed_sources()
    url = str(tmp_path / "t.db")
    first = wb.Optimizer(MIXED, prior=data, seed=0, storage=url)  # auto: RGPE, one GP per source
    for _ in range(5):  # three warm design points, then model asks
        p = first.ask()
        first.tell(p, (np.log10(p["lr"]) + 2) ** 2 + 0.1 * p["depth"])
    design = first.warm_design()
    first.study.close()

    def no_warm_design(*args, **kwargs):
        raise AssertionError("the warm design was computed again")

    monkeypatch.setattr(optimizer_module, "warm_design", no_warm_design)
    rows = likelihood_rows
    rows.clear()  # counted from here on
    again = wb.Optimizer.load(url)
    again.ask()
    np.testing.assert_array_equal(again.warm_design().points, design.points)
    assert again.warm_design().scores == design.scores
    assert rows and set(rows) == {5}  # likelihoods of the target's 5 trials only, none on a source's 20 rows
    assert again.transfer_report().warm_design == first.transfer_report().warm_design


def test_a_study_that_got_its_sources_later_reopens_with_them(tmp_path):
    # Created without sources (so with the plain GP's Yeo-Johnson scale stored), given sources by a
    # later object: reopening must not combine the stored scale with the transfer model (it raised).
    url = str(tmp_path / "t.db")
    cold = wb.Optimizer(MIXED, seed=1, storage=url)
    for _ in range(3):
        cold.tell(cold.ask(), 1.0)
    cold.study.close()
    given = wb.Optimizer.load(url, prior=mixed_sources())  # sources given to load: no stored scale clash
    assert given.transfer == "auto" and given.output_transform == "none"
    given.study.close()
    again = wb.Optimizer.load(url)  # and then found in the study
    assert again.transfer == "auto" and again.output_transform == "none"
    again.tell(again.ask(), 0.5)
    assert again.study.count("complete") == 4


def test_a_new_study_in_an_empty_file_needs_no_seed(tmp_path):
    # With seed=None the optimizer reads the seed of an existing study first; a file that holds no
    # study yet (created empty, or being created by another process) is a new study, not an error.
    path = tmp_path / "empty.db"
    path.touch()
    opt = wb.Optimizer(MIXED, storage=str(path))
    assert isinstance(opt.seed, int) and opt.study.settings["seed"] == opt.seed


def test_without_a_seed_a_reopened_study_has_the_first_objects_transfer_model(tmp_path, likelihood_rows):
    # seed=None draws a seed stored with the study; the transfer model (its rows, its draws) and
    # the stored source fits must use that seed in the first object too, or a reopened object
    # neither predicts as the first one nor reuses its fits.
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, (300, 2))
    y = np.array([bowl({"x": a, "y": b}) for a, b in X])
    data = wb.TaskData.from_numpy(X, y, SPACE, task=np.repeat(["a", "b", "c"], 100))
    url = str(tmp_path / "t.db")
    first = wb.Optimizer(SPACE, prior=data, transfer="rgpe", max_prior=60, storage=url)  # no seed
    for _ in range(5):
        p = first.ask()
        first.tell(p, bowl(p))
    probe = SPACE.encode([{"x": a, "y": b} for a, b in rng.uniform(-3, 3, (20, 2))])
    expected = first.fit_model().predict(probe)  # (predict() answers from the last ask's model)
    first.study.close()
    rows = likelihood_rows
    rows.clear()  # counted from here on
    again = wb.Optimizer.load(url)
    assert again.seed == first.seed and repr(again.model) == repr(first.model)
    for a, b in zip(again.fit_model().predict(probe), expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert rows and set(rows) == {5}  # the target's 5 trials; the sources' 60-row GPs were not refitted
    # with another max_prior the sources' GPs see other rows: their stored fits are not used
    rows.clear()
    wb.Optimizer.load(url, max_prior=40).fit_model()
    assert 40 in rows


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda r: r.pop("y"), "unreadable"),
        (lambda r: r["columns"][0].pop(), "unreadable"),
        (lambda r: r.update(version=2), "version 2"),
        (lambda r: r["settings"].pop("transfer"), "unreadable"),
        (lambda r: r["settings"].update(transfer="magic"), "method 'magic' is unknown"),
        # (a value edited by hand is no longer caught by the digest, which is not recomputed at
        # every read since session 34: zlib's checksum guards the bytes, and values are still checked)
        (lambda r: r["y"].__setitem__(0, "x"), r"row 1, y: value 'x' is not a number"),
        (lambda r: r["columns"][1].__setitem__(0, 99), "outside"),
    ],
)
def test_damaged_stored_records_are_data_errors_naming_the_problem(tmp_path, damage, message):
    import base64
    import json
    import zlib

    url = str(tmp_path / "t.db")
    opt = wb.Optimizer(MIXED, prior=mixed_sources(), seed=0, storage=url)
    opt.tell(opt.ask(), 0.5)
    record = json.loads(zlib.decompress(base64.b64decode(opt.study.get_meta("transfer_source_rows"))))
    damage(record)
    text = base64.b64encode(zlib.compress(json.dumps(record).encode())).decode()
    opt.study.set_meta("transfer_source_rows", text)
    opt.study.close()
    with pytest.raises(DataError, match=message) as info:
        wb.Optimizer.load(url)
    assert "--transfer none" in str(info.value) and "trials are intact" in str(info.value)
    assert [t.value for t in wb.Optimizer.load(url, transfer="none").history] == [0.5]


def test_prior_as_a_dataframe_or_a_dataframe_and_values():
    import pandas as pd

    X, y = source(12)
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    expected = [{"a": a, "b": b} for a, b in X]
    columns = pd.DataFrame({"b": X[:, 1], "a": X[:, 0]})  # parameter columns by name, in any order
    pair = wb.Optimizer(space, prior=(columns, pd.Series(y)), seed=0, transfer="none")
    assert [t.params for t in pair.history] == expected
    assert [t.value for t in pair.history] == pytest.approx(list(y))
    frame = columns.assign(y=y)  # a DataFrame prior: its values in a "y" column
    whole = wb.Optimizer(space, prior=frame, seed=0, transfer="none")
    assert [t.params for t in whole.history] == expected
    assert [t.value for t in whole.history] == pytest.approx(list(y))
    with pytest.raises(DataError, match="missing column"):
        wb.Optimizer(space, prior=columns)  # no values
    labelled = frame.assign(task=["one"] * 6 + ["two"] * 6)
    opt = wb.Optimizer(space, prior=labelled, transfer="rgpe", seed=0)
    assert list(opt.prior.task) == ["one"] * 6 + ["two"] * 6
    assert opt.prior.y == pytest.approx(y)


def test_prior_forms_that_are_easy_to_get_wrong_are_clear_errors(tmp_path):
    X, y = source(4)
    records = [{"x": a, "y": b} for a, b in X]
    with pytest.raises(DataError, match="holds no objective values"):
        wb.Optimizer(SPACE, prior=records)  # the values are missing
    with pytest.raises(DataError, match=r"prior study .*missing\.db.* does not exist"):
        wb.Optimizer(SPACE, prior=[str(tmp_path / "missing.db")])
    for name in ("a.db", "b.db"):
        old = wb.Optimizer(SPACE, seed=1, storage=str(tmp_path / name))
        for p, v in zip(records, y, strict=True):
            old.tell(p, float(v))
        old.study.close()
    # a tuple of two studies is two studies, not an (X, y) pair
    opt = wb.Optimizer(SPACE, prior=(str(tmp_path / "a.db"), str(tmp_path / "b.db")), transfer="rgpe", seed=0)
    assert len(set(opt.prior.task)) == 2 and len(opt.prior.y) == 8


def test_a_prior_study_twice_or_the_study_itself_is_refused(tmp_path):
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    old = wb.Optimizer(space, seed=0, storage=str(tmp_path / "old.db"))
    for (a, b), v in zip(*source(6), strict=True):
        old.tell({"x": a, "y": b}, v)
    old.study.close()
    url = f"sqlite:///{tmp_path / 'old.db'}"
    # before: one source task with every row twice
    with pytest.raises(DataError, match="is given twice"):
        wb.Optimizer(space, prior=[str(tmp_path / "old.db"), url], seed=0)
    # before: the study's own trials read again as a source of itself
    with pytest.raises(DataError, match="is this study itself"):
        wb.Optimizer(space, prior=[url], storage=str(tmp_path / "old.db"), seed=0)
    assert len(wb.Study(url).trials()) == 6


def test_a_list_of_csv_files_and_studies_is_one_source_task_each(tmp_path):
    # before: a CSV path in the list was opened as a study ("is not a warmbo study"), so the Python
    # form of `--prior oct/trials.csv --prior nov/trials.csv --prior old.db` did not exist
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    for folder, seed in (("oct", 1), ("nov", 2)):
        (tmp_path / folder).mkdir()
        X, y = source(8, seed)
        rows = "".join(f"{a},{b},{v}\n" for (a, b), v in zip(X, y, strict=True))
        (tmp_path / folder / "trials.csv").write_text("a,b,y\n" + rows)
    old = wb.Optimizer(space, seed=0, storage=str(tmp_path / "old.db"), maximize=True)
    for (a, b), v in zip(*source(5, 3), strict=True):
        old.tell({"a": a, "b": b}, -v)  # maximised: read the right way round
    old.study.close()
    files = [str(tmp_path / "oct" / "trials.csv"), str(tmp_path / "nov" / "trials.csv")]
    opt = wb.Optimizer(space, prior=[*files, str(tmp_path / "old.db")], seed=0)
    report = opt.transfer_report()
    assert sorted((s.name, s.rows) for s in report.sources) == sorted(
        [(f"task {files[0]}", 8), (f"task {files[1]}", 8), ("task old", 5)]
    )
    assert sorted(opt.prior.y[-5:]) == pytest.approx(sorted(source(5, 3)[1]))  # minimised values
    with pytest.raises(DataError, match="is given twice"):
        wb.Optimizer(space, prior=[files[0], files[0]], seed=0)


def test_sources_given_after_the_design_are_not_suggested_as_its_design(tmp_path):
    # before: a study whose design was over but with fewer than two complete trials (a lab's pending
    # suggestions) took the new sources' warm design: their own rows came back as suggestions
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    url = str(tmp_path / "late.db")
    X, y = source(20)
    first = wb.Optimizer(space, prior=([{"x": a, "y": b} for a, b in X[:10]], y[:10]), seed=0, storage=url)
    asked = first.ask(first.n_initial)
    first.tell(asked[0], bowl(asked[0]))  # one complete, the rest pending
    first.study.close()
    other = ([{"x": a, "y": b} for a, b in X[10:]], y[10:])
    late = wb.Optimizer.load(url, prior=other)
    rows = late.space.encode(other[0])
    for p in late.ask(2):
        assert np.abs(rows - late.space.encode([p])).max(axis=1).min() > 1e-6, p
    late.study.close()


def test_sources_given_after_the_design_report_no_warm_design_the_study_never_asked(tmp_path):
    # before: the report (and `warmbo status`) listed the new sources' warm design as the study's
    # start, though the study's design was over and none of those points was ever asked
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    url = str(tmp_path / "late.db")
    cold = wb.Optimizer(space, seed=0, storage=url)
    for _ in range(cold.n_initial + 1):
        p = cold.ask()
        cold.tell(p, bowl(p))
    cold.study.close()
    X, y = source(20)
    late = wb.Optimizer.load(url, prior=([{"x": a, "y": b} for a, b in X], y))
    p = late.ask()
    late.tell(p, bowl(p))
    assert late.transfer_report().warm_design == ()
    assert "warm design" not in str(late.stored_transfer_report())
    warm = wb.Optimizer(space, prior=([{"x": a, "y": b} for a, b in X], y), seed=0)
    for _ in range(3):
        p = warm.ask()
        warm.tell(p, bowl(p))
    assert len(warm.transfer_report().warm_design) == warm.n_initial  # a study started warm keeps it


def test_a_prior_study_without_a_complete_trial_is_named(tmp_path):
    # before: left out without a word among other studies, and alone (each --prior is read alone)
    # "the prior studies hold no complete trial", though the other --prior studies had trials
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    failed = wb.Optimizer(space, seed=0, storage=str(tmp_path / "failed.db"))
    for _ in range(2):
        failed.tell_failed(failed.ask())
    failed.study.close()
    good = wb.Optimizer(space, seed=0, storage=str(tmp_path / "good.db"))
    for (a, b), v in zip(*source(4), strict=True):
        good.tell({"x": a, "y": b}, v)
    good.study.close()
    with pytest.raises(DataError, match=r"failed.db' holds no complete trial \(2 failed, 0 pending\)"):
        wb.Optimizer(space, prior=[str(tmp_path / "good.db"), str(tmp_path / "failed.db")], seed=0)


def test_a_prior_study_that_does_not_exist_is_named_as_missing(tmp_path, postgres_server):
    # before: "prior study 'missing.db': no study at ...: create one with a search space, `warmbo
    # suggest --space ...`", advice to create an empty study where a finished one was meant
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    (tmp_path / "empty.db").touch()
    missing = postgres_server.url().replace("@", ":s3cret@", 1)
    for prior in (str(tmp_path / "missing.db"), str(tmp_path / "empty.db"), missing):
        with pytest.raises(DataError, match="does not exist: give the file or URL of a finished study") as e:
            wb.Optimizer(space, prior=[prior], seed=0)
        assert "create one" not in str(e.value) and "s3cret" not in str(e.value)


def test_a_rename_reaches_the_studies_of_a_list_that_holds_csv_files_too(tmp_path):
    # before: as_prior([study, csv], rename=...) read the study without the rename and refused it
    # ("has other parameters than this study"), though as_prior([study], rename=...) read it
    from warmbo.prior import as_prior

    old_space = wb.Space([wb.Float("pos", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    old = wb.Optimizer(old_space, seed=0, storage=str(tmp_path / "old.db"))
    old.tell({"pos": 0.5, "b": 1.0}, 2.0)
    old.study.close()
    (tmp_path / "new.csv").write_text("x,b,y\n0.1,0.2,1.0\n")
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    data = as_prior([str(tmp_path / "old.db"), str(tmp_path / "new.csv")], space, False, rename={"pos": "x"})
    assert {"x": 0.5, "b": 1.0} in list(data.params) and len(data) == 2


def test_a_rename_reaches_data_given_in_memory_and_csv_files(tmp_path):
    """as_prior(..., rename=) read studies only: a DataFrame, an (X, y) pair, records or a CSV file
    under the old names were refused for lacking the new ones (a transfer user test; the CLI's
    --prior-rename renamed CSV files); every form now reads them, and a swap (a=b, b=a) applies."""
    import pandas as pd

    from warmbo.prior import as_prior

    space = wb.Space([wb.Float("x1", 0.0, 1.0), wb.Float("x2", 0.0, 1.0)])
    frame = pd.DataFrame({"a": [0.1, 0.2], "b": [0.3, 0.4], "y": [1.0, 2.0]})
    frame.to_csv(tmp_path / "ab.csv", index=False)
    rename = {"a": "x1", "b": "x2"}
    forms = [frame, [frame], (frame[["a", "b"]], frame["y"]), ([{"a": 0.1, "b": 0.3}], [1.0])]
    forms += [[{"a": 0.1, "b": 0.3, "y": 1.0}], [str(tmp_path / "ab.csv")]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the CSV's old columns are not said to be ignored)
        for form in forms:
            assert as_prior(form, space, False, rename=rename).params[0] == {"x1": 0.1, "x2": 0.3}
    swapped = pd.DataFrame({"x1": [0.1], "x2": [0.3], "y": [1.0]})
    assert as_prior(swapped, space, False, rename={"x1": "x2", "x2": "x1"}).params[0] == {
        "x1": 0.3,
        "x2": 0.1,
    }


def test_a_renamed_parameter_s_error_gives_the_python_form_that_reads_it(tmp_path):
    # a user test: Optimizer(prior=[study]) with a parameter renamed since said only the CLI's
    # "--prior-rename OLD=NEW"; the Python form is as_prior(..., rename=...), which now reads as said
    import warmbo.prior  # (the message's own spelling)

    old_space = wb.Space([wb.Float("pos", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    where = str(tmp_path / "old.db")
    old = wb.Optimizer(old_space, seed=0, storage=where)
    for pos, b in ((0.5, 1.0), (-2.0, 2.0), (2.5, -1.0)):
        old.tell({"pos": pos, "b": b}, (pos - 0.5) ** 2 + (b - 1.0) ** 2)
    old.study.close()
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    with pytest.raises(DataError) as refused:
        wb.Optimizer(space, prior=[where], seed=0)
    said = str(refused.value)
    assert f"prior=warmbo.prior.as_prior([{where!r}], space, maximize, rename={{'OLD': 'NEW'}})" in said
    assert "--prior-rename OLD=NEW" in said
    maximize = False
    opt = wb.Optimizer(space, prior=warmbo.prior.as_prior([where], space, maximize, rename={"pos": "x"}))
    assert opt.ask() == {"x": 0.5, "b": 1.0}  # the prior's best, read under the new name


def test_two_in_memory_studies_are_two_source_tasks():
    # before: both were labelled ':memory:', so their rows were one source task in one GP
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    first, second = wb.Optimizer(space, seed=0), wb.Optimizer(space, seed=1)
    for (a, b), v in zip(*source(4), strict=True):
        first.tell({"x": a, "y": b}, v)
        second.tell({"x": a, "y": b}, 10.0 * v)
    opt = wb.Optimizer(space, prior=[first.study, second.study], transfer="rgpe", seed=0)
    assert len(set(opt.prior.task)) == 2 and len(opt.prior) == 8


def test_two_in_memory_studies_beside_a_csv_file_are_two_source_tasks(tmp_path):
    # before: with a CSV path in the list they were refused ("prior ':memory:' is given twice"), and
    # an in-memory study beside a CSV file was labelled as a file's task column (':memory:::memory:')
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    first, second = wb.Optimizer(space, seed=0), wb.Optimizer(space, seed=1)
    for (a, b), v in zip(*source(4), strict=True):
        first.tell({"a": a, "b": b}, v)
        second.tell({"a": a, "b": b}, 10.0 * v)
    (tmp_path / "run.csv").write_text("a,b,y\n0.1,0.2,1.0\n")
    opt = wb.Optimizer(space, prior=[first.study, second.study, str(tmp_path / "run.csv")], seed=0)
    assert sorted(set(opt.prior.task)) == [":memory:", ":memory: (2)", "run"] and len(opt.prior) == 9
    one = wb.Optimizer(space, prior=[first.study, str(tmp_path / "run.csv")], seed=0)
    assert sorted(set(one.prior.task)) == [":memory:", "run"]


def test_a_semicolon_csv_read_with_its_delimiter_joins_a_list_of_studies(tmp_path):
    # before: a prior list could hold a ';'-delimited CSV only as a path, read with ',' (refused:
    # "the header is one column with ';' in it"), and a TaskData read with delimiter=';' in the list
    # was opened as a study ("storage must be a path or a sqlite:/// URL, got TaskData(...)")
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Float("b", -3.0, 3.0)])
    X, y = source(6, 1)
    lab = tmp_path / "lab.csv"
    lab.write_text("a;b;y;bench\n" + "".join(f"{a};{b};{v};{'AB'[i % 2]}\n" for i, ((a, b), v) in
                                               enumerate(zip(X, y, strict=True))))  # fmt: skip
    old = wb.Optimizer(space, seed=0, storage=str(tmp_path / "old.db"))
    for (a, b), v in zip(*source(5, 3), strict=True):
        old.tell({"a": a, "b": b}, v)
    old.study.close()
    with pytest.raises(DataError, match=r"TaskData.from_csv\(path, space, delimiter=';'\)"):
        wb.Optimizer(space, prior=[str(lab), str(tmp_path / "old.db")], seed=0)
    read = wb.TaskData.from_csv(lab, space, delimiter=";", task="bench")
    opt = wb.Optimizer(space, prior=[read, str(tmp_path / "old.db")], seed=0)
    # one source task per study, and per task label of the file, named as `--prior lab.csv` names it
    assert sorted(set(opt.prior.task)) == ["lab:A", "lab:B", "old"] and len(opt.prior) == 11
    assert sorted(opt.prior.y[:6]) == pytest.approx(sorted(y))
    with pytest.raises(DataError, match="is given twice"):
        wb.Optimizer(space, prior=[read, str(lab)], seed=0)


def _conc_loss(p) -> float:  # minimised; a concentration in mM
    return (p["conc"] - 9.0) ** 2 / 20 + np.sin(p["conc"])


def _smallest_gap(points) -> float:
    values = sorted(p["conc"] for p in points)
    return float(np.min(np.diff(values)))


def test_a_batch_with_a_csv_prior_spreads_as_one_without(tmp_path):
    # before: ask(4) on a study with a CSV prior put points 0.02-0.09 mM apart on a 0-20 mM range,
    # where the same study without the prior spread them 0.5-3 mM apart: the pending points'
    # fantasies reached only RGPE's target GP, which had 0.2 of the ensemble's weight, so the
    # uncertainty at a pending point hardly fell and the next point went just past the 0.035
    # lengthscale radius of warmbo.suggest.too_close. Now every GP of the ensemble believes it
    space = wb.Space([wb.Float("conc", 0.0, 20.0)])
    ratios = []
    for seed in range(4):
        rows = np.random.default_rng(100 + seed).uniform(0, 20, 15)  # a related earlier assay
        csv = tmp_path / f"prior{seed}.csv"
        values = (rows - 8.0) ** 2 / 20 + np.sin(rows + 0.3) + 0.5
        csv.write_text("conc,y\n" + "".join(f"{c},{v}\n" for c, v in zip(rows, values, strict=True)))
        gaps = []
        for prior in (None, str(csv)):
            opt = wb.Optimizer(space, prior=prior, seed=seed, maximize=False)
            for _ in range(3):
                s = opt.ask()
                opt.tell(s, _conc_loss(s))
            gaps.append(_smallest_gap(opt.ask(4)))
        ratios.append(gaps[1] / gaps[0])
    # a prior may rightly gather a batch nearer the sources' optimum than a batch without one does
    # (over 12 seeds the ratio is 0.11-1.45, median 0.47); a batch that ignores its pending points is
    # at 0.01-0.07 of it here (0.04 mM of 0.5-3 mM)
    assert min(ratios) >= 0.1 and np.median(ratios) >= 0.25, ratios


@pytest.mark.parametrize("method", ["rgpe", "generic", "efficient", "diff"])
def test_a_transfer_model_believes_a_pending_point_and_leaves_the_shared_gps_alone(method):
    # before: the optimizer's fantasies went through add(): RGPE's reaches only its target GP, told
    # the ensemble's mean (not its own), and the one-GP methods believed it at their fitted noise, not
    # nearly noise-free as the optimizer's GP does: here the standard deviation at the pending point
    # kept 0.89 of its value with RGPE (its mean moved by 0.17) and 0.81 with Efficient-BO
    from warmbo.transfer.baselines import BASELINES

    rng = np.random.default_rng(0)
    source_X = rng.uniform(0, 1, (15, 1))
    model = BASELINES[method](source=(source_X, np.sin(6 * source_X[:, 0])), seed=0)
    X = np.linspace(0.05, 0.95, 8)[:, None]  # noisy target observations: a fitted noise well above 0
    model.fit(X, np.sin(6 * X[:, 0] + 0.2) + 0.3 * np.random.default_rng(1).standard_normal(8))
    pending, grid = np.array([[0.3]]), np.linspace(0, 1, 11)[:, None]
    before = model.predict(grid)
    mean, sd = model.predict(pending)
    fantasy = copy.deepcopy(model).add_believer(pending, noise=1e-6)
    after_mean, after_sd = fantasy.predict(pending)
    assert after_mean == pytest.approx(mean, abs=1e-3 * float(sd[0]))
    assert after_sd[0] < 0.1 * sd[0]  # 0.005-0.04 of it
    if method == "rgpe":
        assert model.weights_[0] > 0.5  # mostly the source's GP, which add() did not reach
    assert fantasy.n_observations == 9 and model.n_observations == 8
    again = model.predict(grid)  # the source GPs the copy shares with the model are as they were
    np.testing.assert_array_equal(again[0], before[0])
    np.testing.assert_array_equal(again[1], before[1])


def test_a_batch_asked_before_any_result_takes_the_sources_next_points_up_to_the_cold_designs_size():
    # before: ask(6) with sources gave the warm design's 2-3 points, then the cold Sobol design's
    # points 4-6 (which the sources rate poorly), as if there were no sources
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("n", 1, 5), wb.Categorical("c", ["a", "b"])])
    rows = space.sample(12, seed=1)
    y = [r["x"] + r["n"] + (0.5 if r["c"] == "b" else 0.0) for r in rows]
    cold_size = wb.optimizer.default_n_initial(3)  # 6
    batch_opt = wb.Optimizer(space, prior=(rows, y), seed=0)
    batch = batch_opt.ask(cold_size + 3)
    encoded = space.encode(batch)
    warm = batch_opt.warm_design().points  # the stored design (2 points: one source), unchanged, first
    assert len(warm) == batch_opt.n_initial == 2 and np.array_equal(encoded[:2], warm)
    source_rows = space.encode(rows)
    from_sources = [np.abs(source_rows - e).max(axis=1).min() < 1e-9 for e in encoded]
    # the second point is the first one's source-model maximum (a climb), the others source rows
    assert from_sources[0] and all(from_sources[2:cold_size]) and not any(from_sources[cold_size:])
    # the next ones in the rule's order: by the sources' mean regret, here the value itself
    nearest = [int(np.abs(source_rows - e).max(axis=1).argmin()) for e in encoded]
    later = [y[i] for i in nearest[batch_opt.n_initial : cold_size]]
    assert later == sorted(later)
    assert len({tuple(e) for e in encoded}) == len(batch)  # distinct
    # past the cold design's size: the cold Sobol design's own points, as without sources
    cold = wb.Optimizer(space, seed=0).ask(cold_size + 3)
    assert np.array_equal(encoded[cold_size:], space.encode(cold)[cold_size:])


def test_a_batch_start_with_fewer_source_configurations_than_the_design_goes_on_with_sobol():
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    rows = [{"x": 0.1, "z": 0.2}, {"x": 0.3, "z": 0.9}]
    opt = wb.Optimizer(space, prior=(rows, [1.0, 2.0]), seed=0)
    batch = space.encode(opt.ask(4))
    assert len({tuple(e) for e in batch}) == 4
    near = [np.abs(space.encode(rows) - e).max(axis=1).min() < 1e-9 for e in batch]
    assert near[0] and sum(near) == 2  # both source rows (one maybe as its model's climb), then Sobol


def test_a_model_or_kernel_given_with_prior_alone_is_refused_not_dropped():
    # before: prior= without transfer= built transfer="auto"'s model and dropped model=/kernel= silently
    from warmbo.kernels import RBF

    space = wb.Space.box([(0.0, 1.0)])
    X = [{"x0": v} for v in np.linspace(0, 1, 8)]
    y = [float(np.sin(6 * d["x0"])) for d in X]
    for given in ({"model": wb.GP(RBF(0.05), noise=1e-3)}, {"kernel": RBF(0.05)}):
        with pytest.raises(ValueError, match=f"{next(iter(given))}= would be ignored: give transfer='none'"):
            wb.Optimizer(space, prior=(X, y), seed=0, **given)
        opt = wb.Optimizer(space, prior=(X, y), transfer="none", seed=0, **given)  # what it advises
        assert len(opt.history) == 8 and opt.transfer == "none"


def test_a_new_object_given_prior_without_transfer_says_it_replaces_the_studys_method(tmp_path):
    # before: Optimizer(space, storage=url, prior=...) switched a study made with transfer="rgpe" to
    # "auto" and stored that, without a word (Optimizer.load(url, prior=...) keeps the method)
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    url = str(tmp_path / "m.db")
    X, y = source(20)
    rows = [{"x": a, "y": b} for a, b in X]
    made = wb.Optimizer(space, prior=(rows, y), transfer="rgpe", seed=0, storage=url)
    made.tell(made.ask(), 1.0)
    made.study.close()
    with pytest.warns(
        UserWarning, match="transfers with transfer='rgpe'; this Optimizer, given prior= without"
    ):
        wb.Optimizer(space, storage=url, prior=(rows[:10], y[:10]), seed=0).study.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the method named again, or the same one: nothing to say
        wb.Optimizer(space, storage=url, prior=(rows[:10], y[:10]), transfer="rgpe", seed=0).study.close()


def test_the_prior_subset_warning_names_a_cap_the_user_gave_instead_of_blaming_speed():
    # before: 9 of 14 rows under the user's own max_prior=5 (per source) "would take minutes per ask"
    space = wb.Space([wb.Float("x", -3.0, 3.0), wb.Float("y", -3.0, 3.0)])
    X, y = source(14)
    rows = [{"x": a, "y": b} for a, b in X]
    with pytest.warns(wb.optimizer.PriorSubsetWarning, match="max_prior=5 was given") as said:
        wb.Optimizer(space, prior=(rows, y), max_prior=5, seed=0)
    assert "minutes" not in str(said[0].message)


def test_predict_of_a_transfer_ensemble_warns_once_and_target_only_is_in_the_users_units():
    # before: opt.predict under transfer="auto" returned the ensemble's mean (sources on their own
    # standardised scales) as "your units": -0.18 +/- 0.001 where 0.0000 was measured, without a word
    from warmbo.optimizer import TransferPredictionWarning

    space = wb.Space([wb.Float("lr", 1e-4, 1e-1, log=True), wb.Float("dropout", 0.0, 0.5)])

    def loss(p):
        return (np.log10(p["lr"]) + 2.5) ** 2 + (p["dropout"] - 0.2) ** 2

    rng = np.random.default_rng(0)
    X = [{"lr": 10 ** rng.uniform(-4, -1), "dropout": rng.uniform(0, 0.5)} for _ in range(20)]
    opt = wb.Optimizer(space, prior=(X, [loss(p) + 0.1 for p in X]), seed=0)
    opt.run(loss, budget=12, progress=False)
    assert np.any(opt.model_.weights_[:-1] > 0)  # a source weighted: the case in question
    done = [t for t in opt.history if t.state == "complete"]
    observed = np.array([t.value for t in done])
    with pytest.warns(TransferPredictionWarning, match="target_only=True") as said:
        opt.predict([t.params for t in done])
        opt.predict([t.params for t in done])
    assert len(said) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", TransferPredictionWarning)
        mean, sd = opt.predict([t.params for t in done], target_only=True)
    # the target GP interpolates its own trials (fitted noise): within 1e-3 of a range of ~5
    assert np.max(np.abs(mean - observed)) < 1e-3 and np.all(sd < 0.01)
    plain = wb.Optimizer(space, seed=0)  # no transfer: target_only changes nothing, no warning
    plain.run(loss, budget=6, progress=False)
    points = [t.params for t in plain.history]
    assert np.array_equal(plain.predict(points, target_only=True)[0], plain.predict(points)[0])


def test_a_warm_design_suggests_the_sources_configurations_as_they_were_written(tmp_path):
    # before: lr = 0.00098 of a source came back as 0.0009800000000000002 (log and exp's round-off),
    # printed so by `warmbo suggest` and kept so in the study
    space = wb.Space([wb.Float("lr", 1e-5, 1e-1, log=True), wb.Float("m", 0.5, 0.99), wb.Int("n", 1, 8)])
    rng = np.random.default_rng(0)
    rows = [
        {"lr": float(f"{10**lr:.2g}"), "m": round(float(m), 3), "n": n}
        for lr, m, n in zip(
            rng.uniform(-5, -1, 30), rng.uniform(0.5, 0.99, 30), rng.integers(1, 9, 30).tolist(), strict=True
        )
    ]
    y = [abs(np.log10(r["lr"]) + 3) + abs(r["m"] - 0.9) for r in rows]
    path = str(tmp_path / "w.db")
    opt = wb.Optimizer(space, prior=(rows, y), seed=0, storage=path)
    batch = opt.ask(6)  # the warm design and its extension before results: source rows but the climb
    written = [dict(s) for s in batch if dict(s) in rows]
    assert len(written) >= 4 and all(space.decode(space.encode([p]))[0] != p for p in written[:1])
    assert [t.params for t in wb.Study(path).trials()] == [dict(s) for s in batch]  # stored as suggested


def test_a_source_whose_values_are_all_equal_is_left_out_with_a_warning():
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    rows = space.sample(20, seed=3)
    # alone: the study starts as a cold one (its design and first asks are the cold optimizer's)
    with pytest.warns(wb.optimizer.UninformativeSourceWarning, match=r"\(20 rows\): every value is 1, so it"):
        alone = wb.Optimizer(space, prior=(rows, [1.0] * 20), seed=0)
    assert alone.warm_design() is None and alone.n_initial == wb.optimizer.default_n_initial(2)
    # the report says so (it was None, as if no source had been given: a user test)
    report = alone.transfer_report()
    assert [(s.rows, s.weight) for s in report.sources] == [(20, None)] and report.method == "auto"
    assert "every source left out: each has one value throughout" in str(report)
    assert str(report).startswith("transfer auto: 1 source task(s), 20 rows")
    cold = wb.Optimizer(space, seed=0)
    assert alone.output_transform == cold.output_transform == "yeo-johnson"  # the cold GP's, too
    for _ in range(8):  # the design and the model's asks alike
        a, b = alone.ask(), cold.ask()
        assert dict(a) == dict(b)
        alone.tell(a, (a["x"] - 0.3) ** 2 + a["z"])
        cold.tell(b, (b["x"] - 0.3) ** 2 + b["z"])
    # beside an informative source: only the constant one is left out
    varied = [r["x"] + r["z"] for r in rows]
    both = wb.TaskData.from_records(rows * 2, [1.0] * 20 + varied, space, task=["flat"] * 20 + ["good"] * 20)
    with pytest.warns(wb.optimizer.UninformativeSourceWarning, match="'flat'"):
        opt = wb.Optimizer(space, prior=both, seed=0)
    assert opt.model.source.tasks == ["good"] and len(opt.model.source) == 20
    assert opt.warm_design() is not None and len(opt.prior) == 40  # every row stays with the study


def test_sources_all_left_out_are_stored_and_replace_the_studys_and_a_reopened_study_stays_cold(tmp_path):
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    rows = space.sample(20, seed=3)
    path = str(tmp_path / "s.db")
    informative = wb.Optimizer(space, prior=(rows, [r["x"] + r["z"] for r in rows]), seed=0, storage=path)
    for _ in range(4):
        s = informative.ask()
        informative.tell(s, s["x"])
    with pytest.warns(wb.optimizer.UninformativeSourceWarning):
        flat = wb.Optimizer.load(path, prior=(rows, [1.0] * 20))
    assert flat.warm_design() is None
    left_out = flat.stored_transfer_report()  # not the old report: the sources given, all left out
    assert left_out.refuted.startswith("every source left out") and left_out.target_weight is None
    # the constant rows replaced the informative ones in the store (before: the old ones came back)
    with pytest.warns(wb.optimizer.UninformativeSourceWarning):
        again = wb.Optimizer.load(path)
    assert list(again.prior.y) == [1.0] * 20 and again.warm_design() is None
    assert again.output_transform == "yeo-johnson"  # the cold optimizer's GP, reopened too
    # a new study of constant sources alone keeps them stored and reopens as the cold optimizer
    other = str(tmp_path / "c.db")
    with pytest.warns(wb.optimizer.UninformativeSourceWarning):
        wb.Optimizer(space, prior=(rows, [2.0] * 20), seed=0, storage=other)
    assert len(wb.Optimizer.stored_sources(wb.Study(other))) > 0
    with pytest.warns(wb.optimizer.UninformativeSourceWarning):
        reopened = wb.Optimizer.load(other)
    cold = wb.Optimizer(space, seed=0)
    assert reopened.output_transform == "yeo-johnson" and reopened.n_initial == cold.n_initial
    assert [dict(s) for s in reopened.ask(3)] == [dict(s) for s in cold.ask(3)]


def test_stored_sources_are_read_back_without_validating_or_hashing_them_again():
    # A record holds the canonical rows of a TaskData validated against the study's space when it was
    # stored, and zlib's checksum guards its bytes, so it is read back without validating each row
    # (1.4 s per `warmbo suggest` at 100,000 rows) or hashing it (0.5 s) again; a column-wise check of
    # kinds and ranges still refuses a value its parameter would refuse (a record written by hand),
    # which then goes through validation and is named by row; damaged bytes are unreadable.
    import base64
    import json
    import zlib

    import warmbo.data as data_module
    from warmbo.prior import digest, sources_from_text, sources_text

    data = mixed_sources()
    text = sources_text(data, {"transfer": "rgpe", "max_prior": 7})
    calls = {"n": 0}
    convert = data_module._convert_point

    def counted(*args, **kwargs):
        calls["n"] += 1
        return convert(*args, **kwargs)

    data_module._convert_point = counted
    try:
        back, _ = sources_from_text(text, MIXED)
    finally:
        data_module._convert_point = convert
    assert calls["n"] == 0  # no row validated again
    assert back == data and back._digest == digest(data)
    np.testing.assert_array_equal(back.X, data.X)
    assert [[type(v) for v in p.values()] for p in back.params] == [
        [type(v) for v in p.values()] for p in data.params
    ]

    def rewritten(change) -> str:
        record = json.loads(zlib.decompress(base64.b64decode(text)))
        change(record)
        return base64.b64encode(zlib.compress(json.dumps(record).encode(), 1)).decode("ascii")

    def outside(record):  # a value the space refuses (the review of the trusted read)
        record["columns"][record["names"].index("depth")][0] = 99

    def half_depth(record):  # a float for an Int
        record["columns"][record["names"].index("depth")][0] = 2.5

    def bad_choice(record):
        record["columns"][record["names"].index("kind")][0] = "z"

    for change, message in ((outside, "outside"), (half_depth, "depth"), (bad_choice, "kind")):
        with pytest.raises(DataError, match=message):
            sources_from_text(rewritten(change), MIXED)
    raw = bytearray(zlib.compress(zlib.decompress(base64.b64decode(text)), 1))
    raw[len(raw) // 2] ^= 0xFF  # a damaged byte
    with pytest.raises(DataError, match="unreadable"):
        sources_from_text(base64.b64encode(bytes(raw)).decode("ascii"), MIXED)


def test_sources_are_stored_whole_or_not_at_all_and_a_half_stored_study_does_not_reopen_cold_silently(
    tmp_path,
):
    # A user test killed `warmbo optimize --prior` (kill -9) while it created the study: the source rows
    # were stored but not the small record naming them, and the study then reopened cold without a word.
    import sqlite3

    data = mixed_sources()
    url = str(tmp_path / "t.db")
    first = wb.Optimizer(MIXED, prior=data, transfer="rgpe", seed=0, storage=url)
    warm = first.warm_design()
    # the two records are written in one transaction: a failure while writing the second keeps neither
    with pytest.raises(sqlite3.Error):
        first.study.set_metas({"a": "1", "b": {"not": "a string"}})
    assert first.study.get_meta("a") is None
    first.study.close()

    # rows without their record (what the two-step writes of earlier versions could leave): used
    study = wb.Study(url)
    study.delete_meta("transfer_sources")
    assert wb.Optimizer.stored_transfer(study) == {"transfer": "rgpe", "max_prior": 1000}
    study.close()
    plain = wb.Optimizer(MIXED, storage=url)  # given no prior=: its first ask says what it leaves out
    with pytest.warns(UserWarning, match=r"stored sources \(transfer='rgpe'\)"):
        plain.ask()
    plain.study.close()
    study = wb.Study(url)
    study.delete_meta("transfer_sources")  # (the ask above stored nothing: still rows alone)
    study.close()
    again = wb.Optimizer.load(url)
    assert again.prior == data and again.transfer == "rgpe"
    np.testing.assert_allclose(MIXED.encode([dict(again.ask())])[0], warm.points[0])
    again.study.close()

    # a study created to transfer whose sources were never stored (stopped before): said, cold
    study = wb.Study(url)
    study.delete_meta("transfer_source_rows")
    study.delete_meta("transfer_sources")
    study.close()
    with pytest.warns(UserWarning, match="created to transfer from sources, but they were not stored"):
        cold = wb.Optimizer.load(url)
    assert cold.transfer == "none" and cold.prior is None


def test_other_sources_given_in_python_replace_the_stored_ones_with_a_warning(tmp_path):
    # A user test reopened a study with prior= meaning "these too": its stored rows were replaced
    # without a word (documented: in Python the sources given are the study's whole set).
    from warmbo.optimizer import SourcesReplacedWarning

    data = mixed_sources()
    url = str(tmp_path / "t.db")
    wb.Optimizer(MIXED, prior=data, seed=0, storage=url).study.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same sources again: nothing to say
        wb.Optimizer.load(url, prior=data).study.close()
    part = data.subset(np.arange(10))
    with pytest.warns(
        SourcesReplacedWarning, match="stored other transfer sources; prior= replaced them with these 10"
    ):
        wb.Optimizer.load(url, prior=part).study.close()
    assert wb.Optimizer.stored_sources(wb.Study(url))["prior"] == part


def test_records_with_their_values_and_a_list_of_sources_given_in_memory_are_priors():
    # A user test: records with their value under 'y' (DataFrame.to_dict("records")) were refused as
    # holding "no objective values", a list of (X, y) pairs was read as study URLs (a StorageError
    # that printed the rows), a tuple of three likewise, and ([], []) spoke of categorical parameters.
    space = wb.Space([wb.Float("a", -3.0, 3.0), wb.Categorical("mode", ["p", "q"])])
    rng = np.random.default_rng(0)
    X1 = [{"a": float(v), "mode": "p"} for v in rng.uniform(-3, 3, 6)]
    X2 = [{"a": float(v), "mode": "q"} for v in rng.uniform(-3, 3, 5)]
    y1, y2 = [p["a"] ** 2 for p in X1], [(p["a"] - 1) ** 2 for p in X2]

    records = [dict(p, y=v) for p, v in zip(X1, y1, strict=True)]
    assert (
        wb.Optimizer(space, prior=records, seed=0).prior == wb.Optimizer(space, prior=(X1, y1), seed=0).prior
    )
    labelled = [dict(p, y=v, task="run 1") for p, v in zip(X1, y1, strict=True)]
    labelled += [dict(p, y=v, task="run 2") for p, v in zip(X2, y2, strict=True)]
    opt = wb.Optimizer(space, prior=labelled, transfer="rgpe", seed=0)
    assert opt.prior.tasks == ["run 1", "run 2"] and list(opt.prior.y) == pytest.approx(y1 + y2)

    pairs = wb.Optimizer(space, prior=[(X1, y1), (X2, y2)], transfer="rgpe", seed=0)
    assert pairs.prior.tasks == ["<prior (X, y) 1>", "<prior (X, y) 2>"]
    assert list(pairs.prior.y) == pytest.approx(y1 + y2) and pairs.prior.params == opt.prior.params
    # a tuple of two sources is two sources, as a list is (it was read as one (X, y) pair: TypeError)
    as_tuple = wb.Optimizer(space, prior=((X1, y1), (X2, y2)), transfer="rgpe", seed=0).prior
    assert as_tuple == pairs.prior
    one, two = (wb.TaskData.from_records(X, v, space) for X, v in ((X1, y1), (X2, y2)))
    assert len(wb.Optimizer(space, prior=(one, two), transfer="rgpe", seed=0).prior.tasks) == 2
    # a parameter named 'task' stays a parameter of the records (not their source's label)
    tasked = wb.Space([wb.Float("a", -3.0, 3.0), wb.Categorical("task", ["p", "q"])])
    rows = [{"a": p["a"], "task": p["mode"], "y": v} for p, v in zip(X1, y1, strict=True)]
    read = wb.Optimizer(tasked, prior=rows, seed=0).prior
    assert read.task is None and [p["task"] for p in read.params] == ["p"] * len(X1)

    for prior, message in [
        (([], []), r"<prior \(X, y\)>: no data rows \(X is empty\)"),
        ((X1, y1, y1), r"prior is a tuple of 3 items: an \(X, y\) pair is a tuple of two"),
        ([(X1, y1), {"a": 1.0}], r"prior item 2 is a dict: a list prior holds one source each"),
        (X1, r"without objective values \(6 of 6 have no 'y'\)"),
        ({"X": X1, "y": y1}, r"a list of parameter dicts with their value under 'y'.*got dict"),
    ]:
        with pytest.raises(DataError, match=message):
            wb.Optimizer(space, prior=prior)


def test_source_fits_made_during_the_design_are_kept_for_the_next_process(
    tmp_path, monkeypatch, likelihood_rows
):
    # Each `warmbo suggest` is a process of its own: the source GPs its design ask fitted (a few, in
    # its time budget) were thrown away, and the first model ask fitted every source again (100
    # sources x 1000 rows: ~5 s). Now the study keeps what is fitted, a later object fits only the
    # rest, and its model predicts as an object that fitted every source itself.
    import json

    import warmbo.optimizer as optimizer_module

    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, (120, 2))
    y = np.array([bowl({"x": a, "y": b}) for a, b in X])
    data = wb.TaskData.from_numpy(X, y, SPACE, task=np.repeat(["a", "b", "c", "d", "e", "f"], 20))
    url = str(tmp_path / "t.db")
    monkeypatch.setattr(optimizer_module, "_PREPARE_SECONDS", 0.0)  # one source GP per design ask

    def stored() -> list[bool]:
        return [f is not None for f in json.loads(wb.Study(url).get_meta("transfer_source_fits"))["fits"]]

    rows = likelihood_rows
    for k in range(2):  # two design asks, each in an object of its own (as two `warmbo suggest`)
        opt = wb.Optimizer(SPACE, prior=data, seed=0, storage=url) if k == 0 else wb.Optimizer.load(url)
        rows.clear()
        p = opt.ask()
        opt.tell(p, bowl(p))
        assert rows.count(20) and set(rows) == {20}  # one source's ML-II fit (its 20 rows), no other
        opt.study.close()
        assert stored() == [True] * (k + 1) + [False] * (5 - k)

    # what another process stores meanwhile is kept (two `warmbo suggest` at once): on a copy
    import shutil

    copy = str(tmp_path / "copy.db")
    shutil.copy(url, copy)
    other = wb.Optimizer.load(copy)  # holds the two fits stored so far
    study = wb.Study(copy)
    record = json.loads(study.get_meta("transfer_source_fits"))
    record["fits"][5] = record["fits"][0]  # (a fit of source 5 stored by "another process")
    study.set_meta("transfer_source_fits", json.dumps(record))
    study.close()
    p = other.ask()  # a design ask: fits source 2, and stores it with the other process's
    other.tell(p, bowl(p))
    merged = [f is not None for f in json.loads(other.study.get_meta("transfer_source_fits"))["fits"]]
    assert merged == [True, True, True, False, False, True]
    other.study.close()

    last = wb.Optimizer.load(url)
    while last.study.count("complete") < last.n_initial + 2:  # the design, then model asks
        p = last.ask()
        last.tell(p, bowl(p))
    assert stored() == [True] * 6
    whole = wb.Optimizer(SPACE, prior=data, seed=0)  # every source GP fitted by this one object
    for t in last.study.trials():
        whole.tell(t.params, t.value)
    grid = [{"x": a, "y": b} for a in (-2.0, 0.0, 1.5) for b in (-1.0, 0.5)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a transfer prediction says what its mean is, once)
        for a, b in zip(last.predict(grid), whole.predict(grid), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_a_pair_whose_series_index_is_not_its_frames_is_refused():
    # (user test, session 35) (df, series[::-1]) was read by position: every value with another
    # row's point, and the first suggestion was the source's worst point
    import pandas as pd

    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    X = pd.DataFrame({"x": [0.1, 0.5, 0.9], "z": [0.2, 0.4, 0.6]})
    y = pd.Series([3.0, 1.0, 2.0])
    with pytest.raises(DataError, match=r"y's index is not X's.*reindex"):
        wb.Optimizer(space, prior=(X, y[::-1]), seed=0)
    with pytest.raises(DataError, match=r"y's index is not X's"):
        wb.prior.check_prior((X, y[y > 1.5]))
    opt = wb.Optimizer(space, prior=(X, y), seed=0)  # the same index: read as before
    assert list(opt.prior.y) == [3.0, 1.0, 2.0]
    assert wb.Optimizer(space, prior=(X, y.to_numpy()[::-1]), seed=0).prior.y[0] == 2.0  # arrays: by position


def test_the_same_data_given_twice_in_memory_is_refused_as_the_same_csv_twice_is(tmp_path):
    # (user test, session 35) [df, df] made two sources of one task (double weight), silently
    import pandas as pd

    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    df = pd.DataFrame({"x": [0.1, 0.5, 0.9], "z": [0.2, 0.4, 0.6], "y": [3.0, 1.0, 2.0]})
    path = tmp_path / "a.csv"
    df.to_csv(path, index=False)
    pair = (df[["x", "z"]], df["y"])
    for prior in ([df, df], [pair, pair], [str(path), df]):
        with pytest.raises(DataError, match="holds the same rows and values as .*give it once"):
            wb.Optimizer(space, prior=prior, seed=0)
    other = df.assign(y=df["y"] + 1.0)
    assert len(wb.Optimizer(space, prior=[df, other], seed=0).prior) == 6  # other values: two sources


def test_an_empty_list_prior_says_so():
    with pytest.raises(wb.prior.PriorFormError, match="prior is an empty list"):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), prior=[])


def test_records_without_a_value_are_left_out_as_their_dataframe_leaves_them_out():
    # (user test, session 35) df.to_dict("records") with NaN values was refused where df itself was read
    import pandas as pd

    from warmbo.data import UnfinishedRowsWarning

    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    nan = float("nan")
    states = ["COMPLETE", "FAIL", "COMPLETE", "RUNNING"]
    df = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "y": [1.0, nan, 2.0, None], "state": states})
    for prior in (df, df.to_dict("records")):
        with pytest.warns(UnfinishedRowsWarning, match=r"left out 2 row\(s\) .*\(FAIL 1, RUNNING 1\)"):
            assert list(wb.Optimizer(space, prior=prior, seed=0).prior.y) == [1.0, 2.0]
    with pytest.warns(UnfinishedRowsWarning, match="no value in 'y'"):  # no state: as a CSV's empty cells
        assert len(wb.Optimizer(space, prior=df.drop(columns="state").to_dict("records"), seed=0).prior) == 2
    complete = df.assign(state="COMPLETE").to_dict("records")  # a complete trial without a value: refused
    with pytest.raises(DataError, match="not finite"):
        wb.Optimizer(space, prior=complete, seed=0)
    with pytest.warns(UnfinishedRowsWarning), pytest.raises(DataError, match="no data rows"):
        wb.Optimizer(space, prior=[{"x": 0.1, "y": nan}], seed=0)


def test_an_optuna_object_in_a_list_prior_says_what_it_is():
    # (user test, session 35) "prior item 1 is a Study: a list prior holds ... Study objects" read as
    # a contradiction: it meant warmbo's Study, not Optuna's. An Optuna study is now a prior itself
    # (test_integrations_optuna.py); an empty one, or one of its trials, is refused naming it
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    empty = optuna.create_study(study_name="empty")
    with pytest.raises(DataError, match=r"the Optuna study 'empty' holds no complete trial"):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), prior=[empty])
    empty.optimize(lambda t: t.suggest_float("x0", 0, 1), 1)
    with pytest.raises(DataError, match=r"prior item 1 is an optuna.FrozenTrial: .*an Optuna study itself"):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), prior=[empty.trials[0]])
    with pytest.raises(DataError, match="prior item 2 is an int: "):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), prior=[([{"x0": 0.5}], [1.0]), 3])


def test_rows_of_a_prior_outside_the_ranges_are_left_out_with_a_warning_and_all_outside_is_an_error():
    # a CSV file (or DataFrame, or (X, y) pair) with one row outside the ranges was refused whole,
    # while the same trials given as a study were left out with a warning (a user test)
    import pandas as pd

    from warmbo.data import DataError
    from warmbo.prior import PriorOutsideSpaceWarning

    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Categorical("c", ["a", "b"])])
    df = pd.DataFrame({"x": [0.2, 5.0, 0.7, 0.4], "c": ["a", "a", "z", "b"], "y": [1.0, 2.0, 3.0, 0.5]})
    with pytest.warns(
        PriorOutsideSpaceWarning, match=r"2 row\(s\) of the prior lie outside .* row 2.*1 more"
    ):
        opt = wb.Optimizer(space, prior=df, seed=0)
    assert [p["x"] for p in opt.prior.params] == [0.2, 0.4]
    with pytest.warns(PriorOutsideSpaceWarning, match=r"1 row\(s\)"):
        wb.Optimizer(
            space, prior=([{"x": 0.2, "c": "a"}, {"x": -1.0, "c": "a"}, {"x": 0.3, "c": "b"}], [1, 2, 3])
        )
    with pytest.raises(DataError, match="every row of the prior lies outside this study's space"):
        wb.Optimizer(space, prior=df.iloc[[1]])
    # every row outside, given as (X, y) or as records, in a list or alone, with or without transfer:
    # before, an IndexError from the check for a source given twice (a user test)
    box = wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("n", 1, 6)])
    pair = (np.array([[0.2, 2.5], [0.4, 3.5]]), np.array([1.0, 2.0]))
    dicts = ([{"x": 5.0, "n": 2}, {"x": 6.0, "n": 3}], [1.0, 2.0])
    records = [{"x": 5.0, "n": 2, "y": 1.0}]
    for prior, first in (
        (pair, "'n': value 2.5 is not an integer"),
        (dicts, "'x': value 5.0"),
        (records, "5.0"),
    ):
        for given in (prior, [prior]) if prior is not records else (records,):  # (records: one source)
            for transfer in ("auto", "none"):
                with pytest.raises(DataError, match=f"every row of the prior lies outside.*{first}"):
                    wb.Optimizer(box, prior=given, transfer=transfer)
    with pytest.raises(DataError, match="not a number|finite"):  # malformed: still an error
        wb.Optimizer(space, prior=pd.DataFrame({"x": [0.2, float("nan")], "c": ["a", "b"], "y": [1.0, 2.0]}))


def test_a_data_prior_with_columns_that_vary_and_are_no_parameters_says_so(tmp_path):
    # a user test: a DataFrame of last week's trials with a 'dropout' column this space has not was
    # read without a word (values at other dropouts as this study's), where the study was refused
    import pandas as pd

    from warmbo.prior import PriorColumnsIgnoredWarning, PriorParametersDroppedWarning

    old = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("dropout", 0.0, 1.0)]), seed=0)
    old.run(lambda p: (p["x"] - 0.3) ** 2 + p["dropout"], budget=6, progress=False)
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    df = old.history.to_dataframe()
    csv = tmp_path / "old.csv"
    df.rename(columns={"value": "y"}).to_csv(csv, index=False)
    records = [{"x": r["x"], "dropout": r["dropout"], "y": r["value"]} for r in df.to_dict("records")]
    pair = ([{"x": r["x"], "dropout": r["dropout"]} for r in records], [r["y"] for r in records])
    for prior, where in (
        (df, "DataFrame"),
        (str(csv), repr(str(csv))),
        (records, "records"),
        (pair, "(X, y)"),
    ):
        for transfer in ("auto", "none"):
            with pytest.warns(
                PriorColumnsIgnoredWarning, match=rf"prior {re.escape(where)} has columns .*'dropout'"
            ):
                opt = wb.Optimizer(space, prior=prior, transfer=transfer)
            assert len(opt.prior) == 6  # (read, as before; the warning says what was left out)
    assert issubclass(PriorColumnsIgnoredWarning, PriorParametersDroppedWarning)  # (one filter for both)
    # the rows at the value held now: nothing varies, nothing said; nor for notes, a constant column,
    # warmbo's own columns (worker, error, created, ...) or a column of the space
    held = df.assign(dropout=0.5)
    notes = pd.DataFrame(
        {
            "x": [0.1, 0.2, 0.3],
            "y": [1.0, 2.0, 3.0],
            "remark": ["a", "b", "c"],
            "lab": ["A"] * 3,
            "note": ["r", "r", "s"],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for prior in (held, notes, df.drop(columns=["dropout"])):
            wb.Optimizer(space, prior=prior)
    # a text column of a few repeated values reads as a removed categorical
    with pytest.warns(PriorColumnsIgnoredWarning, match="'optimiser'"):
        wb.Optimizer(space, prior=notes.assign(optimiser=["adam", "sgd", "adam"]))
    # nor are bookkeeping columns named (a review): an index written by to_csv (read back as
    # 'Unnamed: 0' by pandas), seeds and replicates, dates and times, other metrics of the same runs
    kept = notes.assign(
        seed=[0, 1, 0], date=["2026-01-01", "2026-01-01", "2026-01-02"], accuracy=[0.9, 0.8, 0.85]
    ).assign(when=pd.to_datetime(["2026-01-01 10:00", "2026-01-01 11:00", "2026-01-02 09:00"]))
    kept.to_csv(tmp_path / "kept.csv")  # (with its index)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for prior in (kept, str(tmp_path / "kept.csv"), pd.read_csv(tmp_path / "kept.csv")):
            wb.Optimizer(space, prior=prior)
    with pytest.warns(PriorColumnsIgnoredWarning, match="'use_bn'"):  # (a flag: a removed setting)
        wb.Optimizer(space, prior=kept.assign(use_bn=[True, False, True]))
    with pytest.warns(PriorColumnsIgnoredWarning, match="'loss'"):  # (text: SGDClassifier's loss=)
        wb.Optimizer(space, prior=kept.assign(loss=["hinge", "log_loss", "hinge"]))


def test_a_prior_study_of_a_parameter_added_or_removed_since_says_how_to_read_it(tmp_path):
    # a user test added max_bins to last week's space and was left with "parameter 'max_bins' only in
    # this study" and no way on; the recipes the error now gives are run here as written
    week1 = str(tmp_path / "week1.db")
    old = wb.Optimizer(
        wb.Space([wb.Float("lr", 1e-3, 1.0, log=True), wb.Int("depth", 2, 8)]), storage=week1, seed=0
    )
    for _ in range(6):
        s = old.ask()
        old.tell(s, (np.log10(s["lr"]) + 1) ** 2 + 0.1 * s["depth"])
    added = wb.Space([wb.Float("lr", 1e-3, 1.0, log=True), wb.Int("depth", 2, 8), wb.Int("bins", 16, 255)])
    with pytest.raises(DataError, match=r"df\['bins'\] = VALUE; prior=\[df\]"):
        wb.Optimizer(added, prior=[week1])
    df = wb.Optimizer.load(week1).history.to_dataframe()
    df["bins"] = 255
    assert len(wb.Optimizer(added, prior=[df]).prior.y) == 6
    removed = wb.Space([wb.Float("lr", 1e-3, 1.0, log=True)])
    with pytest.warns(PriorParametersDroppedWarning, match=r"prior=\[df\[\(df\['depth'\] == VALUE\)\]\]"):
        assert len(wb.Optimizer(removed, prior=[week1]).prior.y) == 6  # (read on lr, weighed)
    with pytest.raises(DataError, match=r"prior=\[df\[\(df\['depth'\] == VALUE\)\]\]"):
        wb.Optimizer(removed, prior=[week1], transfer="none")  # (as this study's own trials: refused)
    df = wb.Optimizer.load(week1).history.to_dataframe()
    held = df["depth"].iloc[0]
    kept = wb.Optimizer(removed, prior=[df[(df["depth"] == held)]]).prior
    assert len(kept.y) == int((df["depth"] == held).sum())


def test_a_prior_study_of_the_other_direction_is_said(tmp_path):
    # a chemist user test: a yield study started from last month's without maximize minimised the
    # yield; the CLI now takes the earlier study's direction, and Python says what it does
    from warmbo.prior import PriorDirectionWarning

    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    old = wb.Optimizer(space, storage=str(tmp_path / "old.db"), maximize=True, seed=0)
    for x in (0.1, 0.5, 0.9):
        old.tell({"x": x}, 10 * x)
    old.study.close()
    with pytest.warns(
        PriorDirectionWarning, match=r"created to maximize, and this study minimizes.*maximize=True"
    ):
        turned = wb.Optimizer(space, prior=[str(tmp_path / "old.db")], seed=0)
    assert turned.ask()["x"] == pytest.approx(0.9)  # (its best, 9.0 at 0.9, taken as this study's best)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PriorDirectionWarning)
        wb.Optimizer(space, prior=[str(tmp_path / "old.db")], maximize=True, seed=0)


def test_a_history_frame_saved_as_csv_is_a_prior_as_the_frame_is(tmp_path):
    # a user test: opt.history.to_dataframe() worked as a prior, and the same frame saved with
    # to_csv did not ("missing column(s) 'y'": the frame's values are its 'value' column)
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("k", 1, 4), wb.Categorical("c", ["a", "b"])])
    old = wb.Optimizer(space, seed=0)
    old.run(lambda p: p["x"] + p["k"] + (p["c"] == "b"), budget=6, progress=False)
    frame = old.history.to_dataframe()
    frame.to_csv(tmp_path / "week1.csv", index=False)
    for transfer in ("auto", "none"):
        from_frame = wb.Optimizer(space, prior=frame, transfer=transfer)
        from_csv = wb.Optimizer(space, prior=str(tmp_path / "week1.csv"), transfer=transfer)
        assert [
            (dict(p), float(y)) for p, y in zip(from_csv.prior.params, from_csv.prior.y, strict=True)
        ] == [(dict(p), float(y)) for p, y in zip(from_frame.prior.params, from_frame.prior.y, strict=True)]
        assert sorted(from_csv.prior.y) == sorted(t.value for t in old.history)


def test_a_list_of_one_row_pairs_is_refused_with_the_forms_that_work():
    # a first-time user test: [(dict, value), ...] raised KeyError: 0
    space = wb.Space([wb.Float("x", 0.0, 10.0), wb.Int("n", 1, 5)])
    for prior in ([({"x": 1.0, "n": 2}, 3.0), ({"x": 5.0, "n": 3}, 1.0)], ({"x": 1.0, "n": 2}, 3.0)):
        with pytest.raises(
            DataError, match=r"X is one parameter dict, so this pair is one row: give the rows"
        ):
            wb.Optimizer(space, prior=prior)
    assert len(wb.Optimizer(space, prior=([{"x": 1.0, "n": 2}, {"x": 5.0, "n": 3}], [3.0, 1.0])).prior) == 2


def test_a_report_whose_sources_all_weigh_nothing_says_the_warm_design_was_theirs():
    # "plain GP" read as "the same as a cold start" (a user test: a pure-noise source, 4 of 12 seeds
    # 10x behind cold): the first trials were the sources' picks all the same
    from warmbo.transfer.transfer_report import SourceSummary, TransferReport

    report = TransferReport(
        "auto", (SourceSummary("noise.csv", 40, weight=0.0),), 1.0, 12, warm_design=({"x": 0.5}, {"x": 0.2})
    )
    assert report.fell_back
    said = str(report)
    assert "plain GP from here; the first trials were the warm design's, the sources' picks" in said
    assert "sources' picks" not in str(TransferReport("auto", report.sources, 1.0, 12))  # no warm design


def test_the_report_counts_the_sources_configurations_a_batch_took():
    # (lab user test) `suggest -n 8` before any result took 6 configurations of the sources (the warm
    # design's 2 and the batch's extension), and status and the report said "2 point(s)"
    space = wb.Space([wb.Float("t", 20, 80), wb.Float("pH", 3, 9), wb.Categorical("cat", ["Pd", "Cu", "Fe"])])
    X = space.sample(30, seed=1)
    y = [-((p["t"] - 55) ** 2) / 100 - (p["pH"] - 6) ** 2 + (5 if p["cat"] == "Pd" else 0) for p in X]
    opt = wb.Optimizer(space, seed=0, maximize=True, prior=(X, y))
    batch = opt.ask(8)
    rows = {tuple(sorted(p.items())) for p in X}
    from_sources = [s for s in batch if tuple(sorted(dict(s).items())) in rows or s in batch[:2]]
    assert len(opt.warm_design()) == 2 and len(from_sources) > 2
    report = opt.transfer_report()
    assert len(report.warm_design) == len(from_sources)
    assert [dict(p) for p in report.warm_design] == [dict(s) for s in batch[: len(from_sources)]]


def test_a_study_whose_sources_an_early_version_did_not_store_says_it_goes_on_cold(tmp_path):
    # (upgrade user test) a transfer study made before sources were stored with it resumed cold
    # without a word, while status still showed its last weights as current
    import sqlite3

    url = str(tmp_path / "t.db")
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    opt = wb.Optimizer(space, seed=0, storage=url, prior=([[0.1], [0.5], [0.9]], [3.0, 1.0, 2.0]))
    for _ in range(4):
        s = opt.ask()
        opt.tell(s, (s["x"] - 0.5) ** 2)
    opt.study.close()
    db = sqlite3.connect(url)  # (as such a version left it: the report, no sources)
    db.execute(
        "DELETE FROM meta WHERE key IN ('transfer_sources', 'transfer_source_rows', 'transfer_warm_design')"
    )
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()[0])
    settings.pop("warm_design", None)
    db.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    db.commit()
    db.close()
    with pytest.warns(
        UserWarning, match="transferred from sources that an earlier version of warmbo did not store"
    ):
        again = wb.Optimizer.load(url)
    assert again.transfer == "none"
    report = again.stored_transfer_report()
    assert report is not None and "its sources were not stored with the study" in str(report)
    assert "weights after" not in str(report)


def test_transfer_from_rows_already_imported_as_trials_is_pointed_out(tmp_path):
    # (upgrade user test) `suggest --prior old.db` without --transfer none on a study that had
    # imported old.db's rows: the same rows became a source beside their copies, weight 1.00
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    source = wb.Optimizer(space, seed=0, storage=str(tmp_path / "src.db"))
    for v in (0.1, 0.5, 0.9):
        source.tell({"x": v}, v)
    source.study.close()
    prior = [str(tmp_path / "src.db")]
    url = str(tmp_path / "t.db")
    wb.Optimizer(space, seed=0, storage=url, prior=prior, transfer="none").study.close()
    with pytest.warns(UserWarning, match="the 3 rows of prior= are already trials of study"):
        wb.Optimizer(space, seed=0, storage=url, prior=prior)
    with warnings.catch_warnings():  # (rows that are not all there: a related task, nothing said)
        warnings.filterwarnings("error", message=".*are already trials.*")
        wb.Optimizer(space, seed=0, storage=url, prior=([[0.2], [0.5]], [2.0, 0.5]))
