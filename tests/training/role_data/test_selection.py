"""GRPO row selection on hand-made rows: scores balanced by repeats, problems kept only at the edge of competence."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from data.errors import InputError
from training.role_data.rows import TrainingRow
from training.config import DataSettings
from training.role_data.selection import at_the_edge, balanced_by_score, selected


def graded(score: float, count: int, prefix: str) -> list[TrainingRow]:
    return [TrainingRow(f"{prefix}{index}", "problem", "proof", score) for index in range(count)]


def test_rarer_scores_are_repeated_up_to_the_commonest_each_row_once_before_any_twice() -> None:
    rows = graded(0.0, 7, "zero") + graded(0.5, 2, "half") + graded(1.0, 3, "one")
    rated = [TrainingRow("meta", "problem", "proof", None, "analysis", 1.0, task="meta-verifier")]
    balanced = balanced_by_score(rows + rated, seed=0)
    assert Counter(row.score for row in balanced if not row.task) == {0.0: 7, 0.5: 7, 1.0: 7}
    assert [row.id for row in balanced if row.task] == ["meta"]  # meta-verification tasks are left as they are
    halves = Counter(row.id for row in balanced if row.score == 0.5)
    assert sorted(halves.values()) == [3, 4]  # 7 = 2 + 2 + 2 + 1: every row thrice before one is used a fourth time
    ones = Counter(row.id for row in balanced if row.score == 1.0)
    assert sorted(ones.values()) == [2, 2, 3]
    assert {row.id for row in balanced if row.score == 0.0} == {f"zero{index}" for index in range(7)}
    assert balanced_by_score(rows + rated, seed=0) == balanced


def test_one_score_only_is_left_alone() -> None:
    rows = graded(0.0, 3, "zero")
    assert balanced_by_score(rows, seed=0) == rows


def calibration(tmp_path: Path, spread: list[str], proofs: list[str] | None = None, groups: list[str] | None = None) -> Path:
    path = tmp_path / "calibration.json"
    edge: dict = {"problems_with_spread": spread, "proofs_with_spread": proofs or [], "problems_in_groups": groups or []}
    path.write_text(json.dumps({"edge_of_competence": edge}), encoding="utf-8")
    return path


def test_only_problems_measured_strictly_between_0_and_1_are_kept(tmp_path: Path) -> None:
    rows = [TrainingRow(name, f"problem {name}") for name in ("always", "sometimes", "never", "often")]
    assert [row.id for row in at_the_edge(rows, calibration(tmp_path, ["sometimes", "often", "elsewhere"]))] == \
        ["sometimes", "often"]


def test_a_calibration_that_keeps_nothing_or_is_not_one_is_an_input_error(tmp_path: Path) -> None:
    rows = [TrainingRow("a", "problem")]
    with pytest.raises(InputError, match="none of the 1 training problems"):
        at_the_edge(rows, calibration(tmp_path, ["b"]))
    with pytest.raises(InputError, match="not found"):
        at_the_edge(rows, tmp_path / "missing.json")
    (tmp_path / "other.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="is not the calibration.json"):
        at_the_edge(rows, tmp_path / "other.json")


def test_verifier_proofs_are_kept_at_their_edge_then_balanced(tmp_path: Path) -> None:
    rows = graded(0.0, 4, "zero") + graded(1.0, 2, "one")
    edge = str(calibration(tmp_path, ["zero0"], proofs=["zero1", "zero2", "one0", "elsewhere"]))
    kept = selected("verifier", rows, DataSettings(calibration=edge))
    assert [row.id for row in kept] == ["zero1", "zero2", "one0"]  # the problem list is the generator's, not used here
    balanced = selected("verifier", rows, DataSettings(calibration=edge, balance_scores=True))
    assert Counter(row.id for row in balanced) == {"zero1": 1, "zero2": 1, "one0": 2}


def test_a_calibration_drops_neither_rated_analyses_nor_unmeasured_proofs(tmp_path: Path) -> None:
    """A calibration measures graded proofs: the enhanced verifier's rated-analysis tasks and a loop iteration's
    auto-labelled proofs (``unmeasured``) are kept whatever it says, and the labelled ones count in the balance."""
    rows = graded(0.0, 3, "zero") + [TrainingRow("meta", "problem", "proof", None, "analysis", 1.0, task="meta-verifier")]
    labelled = graded(1.0, 2, "labelled")
    edge = str(calibration(tmp_path, [], proofs=["zero0", "zero1"]))
    kept = selected("verifier", rows, DataSettings(calibration=edge), unmeasured=labelled)
    assert [row.id for row in kept] == ["zero0", "zero1", "meta", "labelled0", "labelled1"]
    balanced = selected("verifier", rows, DataSettings(calibration=edge, balance_scores=True), unmeasured=labelled)
    assert Counter(row.id for row in balanced) == {"zero0": 1, "zero1": 1, "meta": 1, "labelled0": 1, "labelled1": 1}
    assert [row.id for row in selected("verifier", rows, DataSettings(), unmeasured=labelled)] == \
        ["zero0", "zero1", "zero2", "meta", "labelled0", "labelled1"]
    with pytest.raises(InputError, match="none of the 3 training proofs"):  # the tasks do not hide an empty selection
        selected("verifier", rows, DataSettings(calibration=str(calibration(tmp_path, [], proofs=["other"]))))


def test_a_calibration_without_proofs_at_the_edge_asks_for_a_rerun(tmp_path: Path) -> None:
    older = tmp_path / "older.json"
    older.write_text(json.dumps({"edge_of_competence": {"problems_with_spread": ["a"]}}), encoding="utf-8")
    with pytest.raises(InputError, match="has no proofs_with_spread .* rerun the same world calibrate command"):
        at_the_edge(graded(0.0, 1, "zero"), older, "verifier")
    with pytest.raises(InputError, match="none of the 1 training proofs .* share of analyses giving the true score"):
        at_the_edge(graded(0.0, 1, "zero"), calibration(tmp_path, [], proofs=["other"]), "verifier")


def test_each_role_gets_its_own_selection_and_only_when_asked(tmp_path: Path) -> None:
    """``selected`` is what ``train ROLE`` and every ``train loop`` stage apply: balance for the verifier,
    the edge for the generator, nothing for another role or with the options off."""
    verifier_rows = graded(0.0, 3, "zero") + graded(1.0, 1, "one")
    problems = [TrainingRow(name, f"problem {name}") for name in ("kept", "dropped")]
    edge = str(calibration(tmp_path, ["kept"]))
    on = DataSettings(balance_scores=True, calibration=edge)
    assert Counter(row.score for row in selected("verifier", verifier_rows, DataSettings(balance_scores=True))) == \
        {0.0: 3, 1.0: 3}
    assert [row.id for row in selected("generator", problems, on)] == ["kept"]
    assert selected("meta-verifier", verifier_rows, on) == verifier_rows
    assert selected("verifier", verifier_rows, DataSettings()) == verifier_rows
    assert selected("generator", problems, DataSettings()) == problems


def test_the_group_unit_keeps_every_problem_of_the_edge_groups_calibrated_or_not(tmp_path: Path) -> None:
    """``calibration_unit = "group"``: the problems of the groups whose pass@1 lies in the edge band, not the few
    calibrated problems with a spread; the unit is checked when the settings are made."""
    problems = [TrainingRow(name, f"problem {name}") for name in ("calibrated", "fresh", "other group")]
    edge = str(calibration(tmp_path, ["calibrated"], groups=["calibrated", "fresh"]))
    assert [row.id for row in selected("generator", problems, DataSettings(calibration=edge))] == ["calibrated"]
    by_group = DataSettings(calibration=edge, calibration_unit="group")
    assert [row.id for row in selected("generator", problems, by_group)] == ["calibrated", "fresh"]
    with pytest.raises(InputError, match="none of the 1 training problems .* group's pass@1 lies in the edge band"):
        selected("generator", problems[2:], by_group)
    with pytest.raises(ValueError, match="calibration_unit must be one of problem, group"):
        DataSettings(calibration_unit="template")
