"""The world's generator against its checker: properties over many seeds of every family, template and defect."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from data.world.checker import check, check_steps
from data.world.config import DEFECTS, FAMILIES
from data.world.defects import inject
from data.world.families import blueprint, templates
from data.world.proofs import world_proofs
from data.world.steps import parse_steps, render_steps

PLANS = [(family, template, seed) for family in FAMILIES for template in templates(family) for seed in range(6)]


@pytest.mark.parametrize(("family", "template", "seed"), PLANS)
def test_every_unmodified_proof_passes_in_every_wording(family: str, template: str, seed: int) -> None:
    plan = blueprint(family, template, random.Random(seed))
    assert check_steps(plan.problem.goal, plan.steps).score == 1.0
    for style in (0, 1, 17, 123):  # truth survives re-wording
        assert check(plan.problem.goal, render_steps(plan.steps, style)).score == 1.0


@pytest.mark.parametrize(("family", "template", "seed"), PLANS)
def test_every_injected_defect_is_caught_at_the_recorded_step(family: str, template: str, seed: int) -> None:
    plan = blueprint(family, template, random.Random(seed))
    for kind in DEFECTS:
        injected = inject(kind, plan.steps, random.Random(seed * 7919 + DEFECTS.index(kind)))
        if injected is None:
            continue
        steps, at = injected
        for style in (0, seed + 1):
            verdict = check(plan.problem.goal, render_steps(steps, style))
            assert (verdict.score, verdict.first_bad_step) == (0.5 if kind == "unjustified_leap" else 0.0, at), (kind, verdict)


@pytest.mark.parametrize(("family", "template", "seed"), PLANS[::5])
def test_a_rendered_proof_round_trips_through_the_parser(family: str, template: str, seed: int) -> None:
    plan = blueprint(family, template, random.Random(seed))
    for style in (0, seed + 3):
        parsed = parse_steps(render_steps(plan.steps, style))
        assert [(step.number, step.claim, step.reason) for step in parsed] == \
            [(step.number, step.claim, step.reason) for step in plan.steps]


def test_the_world_is_reproducible_covers_every_kind_and_scores_from_the_text() -> None:
    proofs = list(world_proofs(seed=3, problems_per_template=2))
    assert [proof.id for proof in proofs] == [proof.id for proof in world_proofs(seed=3, problems_per_template=2)]
    assert len({proof.id for proof in proofs}) == len(proofs)
    assert {proof.problem.family for proof in proofs} == set(FAMILIES)
    assert {proof.defect for proof in proofs} == {None, *DEFECTS}
    assert set(Counter(proof.score for proof in proofs)) == {0.0, 0.5, 1.0}
    for proof in proofs:
        verdict = check(proof.problem.goal, proof.proof)
        assert (proof.score, proof.first_bad_step) == (verdict.score, verdict.first_bad_step)
        # What the splits hold (opening sentence and all) is judged where the flaw was put, with its kind's score.
        expected = 1.0 if proof.defect is None else 0.5 if proof.defect == "unjustified_leap" else 0.0
        assert (verdict.score, verdict.first_bad_step) == (expected, proof.defect_step), (proof.defect, proof.proof)
        record = proof.to_record()
        assert {"id", "problem", "proof", "score"} <= set(record) and record["score"] == proof.score


def test_no_two_proofs_of_a_template_read_alike() -> None:
    texts = [proof.proof for proof in world_proofs(seed=0, problems_per_template=6, families=("inequality",), defects=())]
    bodies = ["\n".join(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("Step ")) for text in texts]
    assert len(set(bodies)) == len(bodies)
