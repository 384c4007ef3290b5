"""eval/meta_by_defect.py: whether a meta-verifier rates true critiques above invented ones of the same boxed score,
and the one-line refusal of R_meta from a model that does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.errors import InputError
from eval.meta_by_defect import MIN_CRITIQUES, defect_split, rating_by_critique, refuse_unless_rates_by_defect, same_model


def records(kind: str, boxed: float | None, ratings: list[float | None], count: int) -> list[dict]:
    return [{"id": f"{kind}-{boxed}-{index}", "critique_kind": kind, "boxed": boxed, "ratings": ratings}
            for index in range(count)]


def test_a_rater_that_reads_only_the_box_does_not_split_true_from_invented_critiques() -> None:
    by_box = records("true", 0.0, [1.0], 20) + records("invented_defect", 0.0, [1.0], 20) + records("true", 1.0, [1.0], 20)
    split = defect_split(by_box)
    assert split is not None and split["rates_by_defect"] is False
    assert split["by_boxed_score"]["0"]["gap"] == 0.0 and split["by_boxed_score"]["0"]["decided"]
    assert "1" not in split["by_boxed_score"]  # no invented critique boxes 1: nothing to compare there


def test_a_rater_that_checks_the_defect_splits_them_with_an_interval_above_zero() -> None:
    mixed = [*records("true", 0.0, [1.0], 15), *records("true", 0.0, [0.0], 5),
             *records("invented_defect", 0.0, [0.0], 16), *records("invented_defect", 0.0, [1.0], 4),
             *records("wrong_score", 0.5, [0.5], 5)]
    split = defect_split(mixed)
    assert split is not None and split["rates_by_defect"] is True
    entry = split["by_boxed_score"]["0"]
    assert entry["gap"] == pytest.approx(0.75 - 0.2) and 0 < entry["interval"][0] <= entry["gap"] <= entry["interval"][1]
    assert (entry["true"], entry["invented"]) == (20, 20)


def test_a_gap_whose_interval_reaches_zero_fails_and_so_does_too_little_evidence() -> None:
    noisy = [*records("true", 0.0, [1.0], 6), *records("true", 0.0, [0.0], 4),
             *records("invented_defect", 0.0, [1.0], 5), *records("invented_defect", 0.0, [0.0], 5)]
    assert defect_split(noisy)["rates_by_defect"] is False  # gap 0.1, interval well across 0
    few = [*records("true", 0.0, [1.0], MIN_CRITIQUES - 1), *records("invented_defect", 0.0, [0.0], 30)]
    split = defect_split(few)
    assert split["by_boxed_score"]["0"]["decided"] is False and split["rates_by_defect"] is False


def test_unparsed_ratings_are_left_out_and_counted_and_samples_are_averaged() -> None:
    rows = [*records("true", 0.0, [None, None], 3), *records("true", 0.0, [1.0, 0.0, None], 10),
            *records("invented_defect", 0.0, [0.0], 10)]
    split = defect_split(rows)
    assert split["unrated_critiques"] == 3 and split["by_boxed_score"]["0"]["gap"] == 0.5
    assert rating_by_critique(rows) == {"invented_defect, boxed 0": {"critiques": 10, "mean_rating": 0.0},
                                        "true, boxed 0": {"critiques": 10, "mean_rating": 0.5}}


def test_records_without_a_critique_kind_have_no_split() -> None:
    assert defect_split([{"id": "a", "ratings": [1.0]}]) is None


def write_metrics(tmp_path: Path, model: str, rates_by_defect: bool | None) -> Path:
    split = None if rates_by_defect is None else {
        "by_boxed_score": {"0": {"true": 20, "invented": 20, "gap": 0.02 if not rates_by_defect else 0.5,
                                 "interval": [-0.1, 0.14] if not rates_by_defect else [0.3, 0.7], "decided": True}},
        "unrated_critiques": 0, "rates_by_defect": rates_by_defect}
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"settings": {"model": model}, "defect_split": split}), encoding="utf-8")
    return path


def test_r_meta_is_refused_in_one_line_from_a_rater_that_reads_the_box(tmp_path: Path) -> None:
    with pytest.raises(InputError) as refused:
        refuse_unless_rates_by_defect(str(write_metrics(tmp_path, "world-model", False)), "world-model")
    message = str(refused.value)
    assert message.startswith("R_meta refused as a reward source: world-model does not split true from invented critiques")
    assert "boxed 0: true +0.02 over invented [-0.10, +0.14]" in message and "\n" not in message
    refuse_unless_rates_by_defect(str(write_metrics(tmp_path, "world-model", True)), "world-model")  # passes


@pytest.mark.parametrize("model, rates, fragment", [
    ("world-model", None, "has no defect_split"),
    ("./another-model", True, "measured ./another-model, but R_meta comes from world-model"),
])
def test_a_check_of_another_model_or_without_kinds_is_refused(tmp_path: Path, model: str, rates: bool | None,
                                                              fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        refuse_unless_rates_by_defect(str(write_metrics(tmp_path, model, rates)), "world-model")
    with pytest.raises(InputError, match="not found"):
        refuse_unless_rates_by_defect(str(tmp_path / "missing.json"), "world-model")


def test_a_model_name_and_its_folder_are_the_same_model() -> None:
    from engine.model_store import bundled_world_model

    assert same_model("world-model", str(bundled_world_model())) and not same_model("world-model", "embedded")
