"""World levels: level 1 is the original world, levels 2 and 3 are wider, and truth holds at every level."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from data.world.checker import check, check_steps
from data.world.config import DEFAULT_FAMILIES, DEFECTS, FAMILIES, LEVELS, WorldConfig
from data.world.defects import inject
from data.world.families import Blueprint, blueprint, templates
from data.world.proofs import stream, world_proofs
from data.world.splits import goal_key, make_splits, training_templates
from data.world.steps import parse_steps, render_steps

BUNDLED = Path(__file__).resolve().parents[3] / "data" / "bundled" / "world"
HARDER = [(family, template, level, seed) for family in FAMILIES for template in templates(family) for level in LEVELS[1:]
          for seed in range(4)]


def expected(defect: str | None) -> float:
    return 1.0 if defect is None else 0.5 if defect == "unjustified_leap" else 0.0


@pytest.mark.parametrize(("family", "template", "level", "seed"), HARDER)
def test_every_harder_proof_passes_and_every_defect_is_caught_at_its_step(family: str, template: str, level: int,
                                                                            seed: int) -> None:
    plan = blueprint(family, template, random.Random(seed), level)
    assert plan.problem.level == level
    assert_true_and_every_defect_caught(plan, seed)


def assert_true_and_every_defect_caught(plan: Blueprint, seed: int) -> None:
    """The plan's proof passes in several wordings and round-trips; each injected defect is found at its step."""
    assert check_steps(plan.problem.goal, plan.steps).score == 1.0
    for style in (0, 1, 17):
        assert check(plan.problem.goal, render_steps(plan.steps, style)).score == 1.0
    parsed = parse_steps(render_steps(plan.steps, seed + 5))
    assert [(step.claim, step.reason) for step in parsed] == [(step.claim, step.reason) for step in plan.steps]
    for kind in DEFECTS:
        injected = inject(kind, plan.steps, random.Random(seed * 7919 + DEFECTS.index(kind)))
        if injected is None:
            continue
        steps, at = injected
        for style in (0, seed + 1):
            verdict = check(plan.problem.goal, render_steps(steps, style))
            assert (verdict.score, verdict.first_bad_step) == (expected(kind), at), (kind, verdict)


def test_written_proofs_of_every_family_and_level_score_by_their_defect_at_its_step() -> None:
    """The checker's first bad step is the injected step, and the score is 1 / 0.5 / 0 by defect kind."""
    proofs = list(world_proofs(seed=3, problems_per_template=2, families=FAMILIES, levels=LEVELS))
    assert {(proof.problem.family, proof.problem.level) for proof in proofs} == {(f, level) for f in FAMILIES for level in LEVELS}
    for level in LEVELS:
        assert {proof.defect for proof in proofs if proof.problem.level == level} == {None, *DEFECTS}
    for proof in proofs:
        verdict = check(proof.problem.goal, proof.proof)
        assert (proof.score, proof.first_bad_step) == (verdict.score, verdict.first_bad_step)
        assert (proof.score, proof.first_bad_step) == (expected(proof.defect), proof.defect_step), proof
        record = proof.to_record()
        assert record.get("difficulty", 1) == proof.problem.level and ("difficulty" in record) == (proof.problem.level > 1)
    assert len({proof.id for proof in proofs}) == len(proofs)


def test_every_defect_kind_applies_at_every_level() -> None:
    for level in LEVELS:
        applied = Counter()
        for family in FAMILIES:
            for template in templates(family):
                plan = blueprint(family, template, random.Random(level), level)
                for kind in DEFECTS:
                    applied[kind] += inject(kind, plan.steps, random.Random(0)) is not None
        assert all(applied[kind] for kind in DEFECTS), (level, applied)


def test_level_1_is_the_bundled_world_and_streams_name_their_level() -> None:
    assert stream(0, "train", "identity", "square_sum") == "0/train/identity/square_sum"
    assert stream(0, "train", "identity", "square_sum", level=2) == "0/train/identity/square_sum/level 2"
    splits = make_splits(WorldConfig())
    for name, split in splits.items():
        rows = [json.loads(line) for line in (BUNDLED / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [(row["id"], row["score"], row["first_bad_step"], row["defect"]) for row in rows] == \
            [(proof.id, proof.score, proof.first_bad_step, proof.defect) for proof in split.proofs]
        assert "difficulty" not in rows[0]
    assert WorldConfig().families == list(DEFAULT_FAMILIES) and "arithmetic" not in DEFAULT_FAMILIES


def test_levels_are_drawn_apart_and_no_test_problem_is_a_training_problem_at_any_level() -> None:
    config = WorldConfig(problems_per_template=8, test_problems_per_template=3, defects=[], levels=[2, 3],
                         families=list(FAMILIES), held_out_families=["induction"])
    splits = make_splits(config)
    train = splits["train"]
    assert train.redraw_failures == 0 and dict(train.failures_by_level) == {2: 0, 3: 0}
    assert all(split.redraw_failures == 0 for split in splits.values())
    train_goals = [goal_key(proof) for proof in train.proofs]
    assert len(set(train_goals)) == len(train_goals)  # one correct proof per problem here (no defects)
    trained = sum(len(training_templates(family, 1)) for family in FAMILIES if family != "induction")
    assert Counter(proof.problem.level for proof in train.proofs) == {2: 8 * trained, 3: 8 * trained}
    for name in ("test_in", "test_out"):
        goals = [goal_key(proof) for proof in splits[name].proofs]
        assert len(set(goals)) == len(goals) and not set(goals) & set(train_goals)
        assert {proof.problem.level for proof in splits[name].proofs} == {2, 3}
    assert {proof.problem.family for proof in splits["test_out"].proofs} == {"induction"}
    again = make_splits(config)
    assert [proof.id for proof in again["test_in"].proofs] == [proof.id for proof in splits["test_in"].proofs]


@pytest.mark.parametrize("levels", [[], [0], [4], [1, 1]])
def test_levels_are_checked(levels: list[int]) -> None:
    with pytest.raises(ValueError, match="levels"):
        WorldConfig(levels=levels)


FINE = [(template, level, seed) for template in templates("identity") for level in LEVELS for seed in range(3)]


@pytest.mark.parametrize(("template", "level", "seed"), FINE)
def test_fine_identity_proofs_pass_and_every_defect_is_caught_at_its_step(template: str, level: int, seed: int) -> None:
    plan = blueprint("identity", template, random.Random(seed), level, fine=True)
    coarse = blueprint("identity", template, random.Random(seed), level)
    assert plan.problem.goal == coarse.problem.goal and len(plan.steps) >= len(coarse.steps)
    assert_true_and_every_defect_caught(plan, seed)


def test_fine_steps_take_one_product_at_a_time_by_its_formula() -> None:
    plan = blueprint("identity", "square_difference", random.Random(0), 2, fine=True)
    left, right = plan.problem.goal[0].left, plan.problem.goal[0].right
    first, second = left.split(" - ", 1) if left.count("(") == 2 else (left, "")
    claims = [(step.claim.left, step.claim.right) for step in plan.steps]
    assert len(claims) == 5 and claims[0][0] == left and claims[-1][1] == right
    formula = claims[0][1]
    assert formula.endswith(f" - {second}") and "2(" in formula  # the first square by the binomial formula, the second untouched
    assert "2(" not in claims[1][1] and claims[1][1].endswith(f" - {second}")  # then its value
    other = make_splits(WorldConfig(families=["identity", "equation"], problems_per_template=1, fine_steps=True))["train"]
    plain = make_splits(WorldConfig(families=["identity", "equation"], problems_per_template=1))["train"]
    assert [proof.proof for proof in other.proofs if proof.problem.family == "equation"] == \
        [proof.proof for proof in plain.proofs if proof.problem.family == "equation"]  # other families are written as before
    assert {proof.problem.goal for proof in other.proofs} == {proof.problem.goal for proof in plain.proofs}
