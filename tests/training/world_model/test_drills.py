"""Comparison drills: real worked-step sides, half differing, the verdict following the sides, with or without the claim the
sides came from; the role examples unchanged."""

from __future__ import annotations

import pytest

from data.world.proofs import world_proofs
from data.world.work import COMPARED_SIDES, WORKED_STEP, restated
from training.world_model.config import ExampleSettings
from training.world_model.decision import decision_spans
from training.world_model.drills import PAIRS_PER_DRILL, drill_examples, side_pairs
from training.world_model.examples import world_examples

PROOFS = list(world_proofs(seed=0, problems_per_template=2, families=("identity", "arithmetic")))


def test_sides_come_from_the_analyses_and_agree_exactly_when_equal() -> None:
    agree, differ = side_pairs(PROOFS)
    assert agree and differ
    assert all(left == right for left, right in agree) and all(left != right for left, right in differ)


def test_a_drill_alternates_verdicts_that_follow_its_sides() -> None:
    drills = drill_examples(PROOFS, 20, seed=0)
    assert len(drills) == 20 and drills == drill_examples(PROOFS, 20, seed=0)
    agree, differ = side_pairs(PROOFS)
    for drill in drills:
        assert drill["role"] == "comparison" and drill["prompt"][0]["role"] == "user"
        lines = drill["answer"].split("\n")
        assert len(lines) == PAIRS_PER_DRILL
        verdicts = []
        for line in lines:
            match = COMPARED_SIDES.fullmatch(line.removesuffix("."))
            left, right, verdict = match.group(1, "right", "verdict")
            assert (left, right) in (differ if verdict == "differ" else agree)
            verdicts.append(verdict)
        assert verdicts.count("differ") == PAIRS_PER_DRILL // 2 and verdicts[0] != verdicts[1]
        assert not list(WORKED_STEP.finditer(drill["answer"]))  # not a step of an analysis
        spans = decision_spans(drill["answer"])  # but weighted as one by training.decision_weight
        assert [drill["answer"][start:end] for start, end in spans[1::2]] == verdicts
    assert drill_examples(PROOFS, 0, seed=0) == []
    assert drill_examples([proof for proof in PROOFS if proof.score == 1.0], 5, seed=0) == []  # nothing differs


def test_a_claim_drill_restates_the_claim_whose_sides_it_compares() -> None:
    plain, drills = drill_examples(PROOFS, 20, seed=0), drill_examples(PROOFS, 20, seed=0, claims=True)
    assert drills == drill_examples(PROOFS, 20, seed=0, claims=True) and drills[0]["prompt"] != plain[0]["prompt"]
    for drill, bare in zip(drills, plain):
        steps = list(WORKED_STEP.finditer(drill["answer"]))  # each line a worked step, as analyses write them
        assert [int(step.group(1)) for step in steps] == list(range(1, PAIRS_PER_DRILL + 1))
        assert [step.group(0)[step.group(0).index("Expanded"):] for step in steps] == [
            line.removesuffix(".") for line in bare["answer"].split("\n")]  # the same comparisons as without claims
        for step in steps:
            assert restated(step.group(2), (step.group(3), step.group("right")))  # the sides are that claim's
        spans = decision_spans(drill["answer"], ["flawed_right"])  # a flawed side now has a claim to expand from
        assert len(spans) == PAIRS_PER_DRILL // 2
    flawed = sum(not restated(step.group(2), (step.group(3), step.group(3)))
                 for drill in drills for step in WORKED_STEP.finditer(drill["answer"]))
    assert flawed == 20 * PAIRS_PER_DRILL // 2  # half the claims are false


def test_drills_join_the_role_examples_without_changing_them() -> None:
    plain = world_examples(PROOFS, ExampleSettings(), world_seed=0)
    drilled = world_examples(PROOFS, ExampleSettings(comparison_drills=0.5), world_seed=0)
    problems = len({proof.problem.id for proof in PROOFS})
    assert [example for example in drilled if example["role"] != "comparison"] == plain
    places = [index for index, example in enumerate(drilled) if example["role"] == "comparison"]
    assert len(places) == round(0.5 * problems)
    assert places != list(range(len(drilled) - len(places), len(drilled)))  # spread among them, not appended
    claimed = world_examples(PROOFS, ExampleSettings(comparison_drills=0.5, drill_claims=True), world_seed=0)
    assert [example["role"] for example in claimed] == [example["role"] for example in drilled]
    assert all(WORKED_STEP.search(example["answer"]) for example in claimed if example["role"] == "comparison")
    halved = world_examples(PROOFS, ExampleSettings(comparison_drills=0.5, drill_claims=True, drill_lines=4), world_seed=0)
    assert [example for example in halved if example["role"] != "comparison"] == plain
    assert sum(example["role"] == "comparison" for example in halved) == 2 * len(places)


def test_a_negative_drill_count_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        ExampleSettings(comparison_drills=-1)


def test_a_drill_written_in_shorter_examples_keeps_its_pairs_and_their_order() -> None:
    whole = drill_examples(PROOFS, 5, seed=0, claims=True)
    halves = drill_examples(PROOFS, 5, seed=0, claims=True, lines=4)
    assert len(halves) == 2 * len(whole) and drill_examples(PROOFS, 5, seed=0, lines=8) == drill_examples(PROOFS, 5, seed=0)

    def comparisons(drills: list[dict]) -> list[str]:
        return [step.group(0)[step.group(0).index(":"):] for drill in drills for step in WORKED_STEP.finditer(drill["answer"])]

    assert comparisons(halves) == comparisons(whole)  # the same claims and sides, in the same order
    for half in halves:
        steps = [int(step.group(1)) for step in WORKED_STEP.finditer(half["answer"])]
        assert steps == [1, 2, 3, 4]  # each example numbered from step 1
        verdicts = [match.group("verdict") for match in COMPARED_SIDES.finditer(half["answer"])]
        assert verdicts.count("differ") == 2  # still half flawed
    with pytest.raises(ValueError, match="must divide a drill's 8 comparisons"):
        drill_examples(PROOFS, 5, seed=0, lines=3)
    with pytest.raises(ValueError, match="drill_lines must divide a drill's 8 comparisons"):
        ExampleSettings(comparison_drills=1, drill_lines=3)
