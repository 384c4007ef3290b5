"""Calibration metrics on hand-made records: pass@1 and pass@k, per-score recalls, localisation, the edge groups; the cap
and the seen / held-out templates of a real world split."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.calibration import (calibration_table, edge_groups, markdown_table, problems_at_the_edge, problems_in_groups,
                              proofs_at_the_edge)
from eval.config import CalibrationConfig
from eval.calibration_run import capped, read_split, training_templates


def generation(problem_id: str, family: str, level: int, passes: list[bool]) -> dict:
    return {"id": problem_id, "split": "test_in", "family": family, "level": level, "template": "t", "passes": passes,
            "formats_ok": [True] * len(passes)}


def verification(proof_id: str, score: float, bad: int | None, analyses: list[tuple[float | None, str]]) -> dict:
    return {"id": proof_id, "split": "test_in", "family": "identity", "level": 1, "template": "t",
            "truth": {"score": score, "first_bad_step": bad, "steps": 2},
            "analyses": [{"score": given, "analysis": text} for given, text in analyses]}


GENERATIONS = [
    generation("a", "identity", 1, [True, True, True, True]),
    generation("b", "identity", 1, [True, False, False, False]),
    generation("c", "identity", 2, [False, False, False, False]),
    generation("d", "identity", 2, [True, False, True, False]),
]
VERIFICATIONS = [
    verification("right", 1.0, None, [(1.0, "Step 1 is correct. Step 2 is correct."), (0.0, "Step 2 is wrong.")]),
    verification("leap", 0.5, 2, [(0.5, "Step 2 is stated without any justification."), (0.5, "Step 1 is wrong.")]),
    verification("false", 0.0, 1, [(0.0, "Step 1 is wrong."), (None, "no verdict")]),
]


def row(rows: list[dict], family: str, level: int) -> dict:
    return next(item for item in rows if item["family"] == family and item["level"] == level)


def test_pass_at_1_is_the_mean_sample_pass_rate_and_pass_at_k_any_pass() -> None:
    rows = calibration_table(GENERATIONS, [], minimum=1)
    level_1, level_2, whole = row(rows, "identity", 1), row(rows, "identity", 2), row(rows, "all", 0)
    assert level_1["generator"]["pass@1"] == pytest.approx((1 + 0.25) / 2) and level_1["generator"]["pass@k"] == 1.0
    assert level_2["generator"]["pass@1"] == pytest.approx(0.25) and level_2["generator"]["pass@k"] == 0.5
    assert whole["problems"] == 4 and whole["generator"]["pass@1"] == pytest.approx(0.4375)
    low, high = whole["generator"]["intervals"]["pass@1"]
    assert 0 <= low <= 0.4375 <= high <= 1
    assert [(group["family"], group["level"]) for group in edge_groups(rows, 0.3, 0.7)] == [("identity", 1)]
    assert problems_at_the_edge(GENERATIONS) == ["b", "d"]


def test_problems_in_groups_are_every_problem_of_the_edge_groups_measured_or_not() -> None:
    groups = edge_groups(calibration_table(GENERATIONS, [], minimum=1), 0.3, 0.7)  # identity 1 only
    unmeasured = [{"id": "fresh", "split": "test_in", "family": "identity", "level": 1},
                  {"id": "harder", "split": "test_in", "family": "identity", "level": 2},
                  {"id": "elsewhere", "split": "train", "family": "identity", "level": 1}]
    assert problems_in_groups([*GENERATIONS, *unmeasured], groups) == ["a", "b", "fresh"]
    assert problems_in_groups(unmeasured, []) == []


def test_the_roles_measured_are_checked() -> None:
    assert CalibrationConfig(roles=["generator"]).roles == ["generator"]
    for roles in ([], ["prover"]):
        with pytest.raises(ValueError, match="roles must be a non-empty list"):
            CalibrationConfig(roles=roles)


def test_proofs_at_the_edge_are_those_some_but_not_all_of_whose_analyses_give_the_true_score() -> None:
    # right: 1 of 2 analyses right; leap: both right (no spread); false: 1 right, 1 without a score (a miss)
    assert proofs_at_the_edge(VERIFICATIONS) == ["right", "false"]


def test_verifier_recall_counts_every_analysis_and_the_verdict_uses_the_first() -> None:
    verifier = row(calibration_table([], VERIFICATIONS, minimum=1), "identity", 1)["verifier"]
    assert (verifier["recall_1"], verifier["recall_0.5"], verifier["recall_0"]) == (0.5, 1.0, 0.5)
    assert verifier["sample_balanced_accuracy"] == pytest.approx(2 / 3)
    assert verifier["balanced_accuracy"] == 1.0  # every first analysis gives the true score
    assert verifier["localisation"] == pytest.approx(1.0)  # first analyses of the flawed proofs blame their first bad step
    assert verifier["majority_class"]["balanced_accuracy"] == pytest.approx(1 / 3)
    assert verifier["random_step"]["localisation"] == 0.5


def test_the_markdown_table_has_a_row_per_group_with_its_baselines() -> None:
    table = markdown_table(calibration_table(GENERATIONS, VERIFICATIONS, minimum=1))
    lines = table.strip().splitlines()
    assert len(lines) == 2 + 3  # header, rule, identity L1, identity L2, all
    assert "(0.33)" in lines[-1] or "(0.33)" in table


def test_seen_and_held_out_templates_are_separate_rows_with_a_whole_for_each() -> None:
    seen = {**generation("s", "identity", 1, [True, False]), "templates": "seen"}
    held_out = {**generation("h", "identity", 1, [False, False]), "template": "u", "templates": "held-out"}
    rows = calibration_table([seen, held_out], [], minimum=1)
    found = {(item["family"], item["templates"]): item["generator"]["pass@1"] for item in rows}
    assert found == {("identity", "seen"): 0.5, ("identity", "held-out"): 0.0, ("all", ""): 0.25,
                     ("all", "seen"): 0.5, ("all", "held-out"): 0.0}
    assert [(group["family"], group["templates"]) for group in edge_groups(rows, 0.2, 0.7)] == [("identity", "seen")]
    assert "| identity | 1 | seen | 1 |" in markdown_table(rows)


def test_the_cap_takes_templates_in_turn_and_keeps_seen_and_held_out_apart() -> None:
    def problem(problem_id: str, template: str, templates: str) -> dict:
        return {"id": problem_id, "family": "identity", "level": 1, "template": template, "templates": templates}

    problems = [problem("a1", "a", "seen"), problem("a2", "a", "seen"), problem("a3", "a", "seen"),
                problem("b1", "b", "seen"), problem("c1", "c", "held-out"), problem("c2", "c", "held-out")]
    proofs = [{"id": f"{item['id']}-proof", "problem_id": item["id"]} for item in problems]
    kept, kept_proofs = capped(problems, proofs, 2)
    assert [item["id"] for item in kept] == ["a1", "b1", "c1", "c2"]
    assert [item["problem_id"] for item in kept_proofs] == ["a1", "b1", "c1", "c2"]
    assert capped(problems, proofs, 0) == (problems, proofs)


def test_a_world_split_says_which_templates_training_saw() -> None:
    world = Path(__file__).parents[2] / "data" / "bundled" / "world"
    seen = training_templates(world)
    assert seen is not None
    problems, proofs = read_split(world, "test_in", seen)
    kinds = {(item["family"], item["template"]): item["templates"] for item in problems}
    assert set(kinds.values()) == {"seen", "held-out"}
    assert all((family, template) in seen for (family, template), kind in kinds.items() if kind == "seen")
    assert {item["templates"] for item in proofs} == {"seen", "held-out"}
    assert read_split(world, "test_in")[0][0].get("templates") is None
    assert not any(item["templates"] == "seen" for item in read_split(world, "test_out", seen)[0])
