"""Reading a verifier's worked steps back and checking them against the proof (data.world.work)."""

from __future__ import annotations

import random

import pytest

from data.world.proofs import world_proofs
from data.world.work import WorkedStep, work_accuracy, worked_steps
from training.role_data.world_critiques import worked_analysis, worked_meta_critiques

PROOF = ("Proof.\nStep 1: (3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25, by distributing every product.\n"
         "Step 2: So 9x^2 - 25 + 25 = 9x^2 (by cancelling opposite terms).")


def analysis(left: str, right: str, verdict: str, claim: str = "(3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25") -> str:
    return (f"Here is my evaluation of the solution:\nStep 1: {claim}. Expanded, the left side is {left} and the right "
            f"side is {right}. They {verdict}, so Step 1 is {'correct' if verdict == 'agree' else 'wrong'}.")


def test_the_worlds_own_worked_analyses_are_all_true_work() -> None:
    proofs = list(world_proofs(seed=11, problems_per_template=2))
    worked = [work_accuracy(worked_analysis(proof), proof.proof) for proof in proofs]
    assert {value for value in worked if value is not None} == {1.0}
    assert sum(value is not None for value in worked) > len(proofs) / 2  # most proofs have an equality step to work


def test_an_invented_defect_miscomputes_the_side_it_blames() -> None:
    proofs = list(world_proofs(seed=11, problems_per_template=2))
    invented = [(critique, proof) for index, proof in enumerate(proofs)
                for critique in worked_meta_critiques(proof, random.Random(index)) if critique.kind == "invented_defect"]
    rated = [work_accuracy(critique.analysis, proof.proof) for critique, proof in invented]
    assert any(value is not None and value < 1 for value in rated)


@pytest.mark.parametrize(("left", "right", "verdict", "expansions_right", "sides_agree", "verdict_follows"), [
    ("9x^2", "9x^2", "agree", True, True, True),
    ("9x^2", "9x^2", "differ", True, True, False),  # its own sides agree, yet it says they differ: what the world model does
    ("9x^2 - 25", "9x^2", "differ", False, False, True),  # a miscomputed side, but the verdict follows from what it wrote
    ("9x^2 - 25", "9x^2", "agree", False, False, False),
    ("9*x**2", "9x^2", "agree", True, True, True),  # the same polynomial written another way
])
def test_each_worked_step_is_checked_for_its_expansions_and_its_verdict(
        left: str, right: str, verdict: str, expansions_right: bool, sides_agree: bool, verdict_follows: bool) -> None:
    [step] = worked_steps(analysis(left, right, verdict), PROOF)
    assert step == WorkedStep(1, expansions_right, sides_agree, verdict == "agree", claim_restated=True,
                              true_sides=(left != "9x^2 - 25", True))
    assert step.verdict_follows is verdict_follows


@pytest.mark.parametrize(("claim", "left", "right", "restated", "true_sides"), [
    ("(3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25", "9x^2", "9x^2", True, (True, True)),
    ("(3x + 5)(3x - 5) + 25 = 9x^2", "9x^2", "9x^2", True, (True, True)),  # the same polynomials, written shorter
    # what the continued world model writes at a flawed step: a term dropped from the claim, then the dropped claim worked
    ("(3x + 5)(3x - 5) = 9x^2 - 25 + 25", "9x^2 - 25", "9x^2", False, (False, True)),
    ("(3x + 5)(3x - 5) + 25 = 9x^2 - 25 + 25", "9x^2", "9x^2 - 25", True, (True, False)),
    ("(3x + 5)(3x - 5) + 25", "9x^2", "9x^2", None, (True, True)),  # not one equality: no restatement to check
])
def test_a_worked_step_says_whether_it_restated_the_claim_and_which_side_it_miscomputed(
        claim: str, left: str, right: str, restated: bool | None, true_sides: tuple[bool, bool]) -> None:
    [step] = worked_steps(analysis(left, right, "agree", claim), PROOF)
    assert (step.claim_restated, step.true_sides, step.expansions_right) == (restated, true_sides, all(true_sides))


def test_a_step_the_proof_lacks_has_no_right_expansions_and_no_work_means_nothing_to_rate() -> None:
    text = analysis("9x^2", "9x^2", "agree").replace("Step 1:", "Step 7:")
    assert worked_steps(text, PROOF) == [WorkedStep(7, False, True, True)]
    assert work_accuracy("Step 1 is correct. Step 2 is correct.", PROOF) is None
    assert work_accuracy(analysis("9x^2", "9x^2", "agree") + " " + analysis("9x^2", "9x^2", "differ")
                         .replace("Here is my evaluation of the solution:\nStep 1:", "Step 2:"), PROOF) == 0.75


def test_a_worked_step_is_numbered_from_one() -> None:
    with pytest.raises(ValueError, match="numbered from 1"):
        WorkedStep(0, True, True, True)


def test_the_worlds_own_difference_form_analyses_are_all_true_work() -> None:
    proofs = list(world_proofs(seed=11, problems_per_template=2))
    for proof in proofs:
        for step in worked_steps(worked_analysis(proof, difference=True), proof.proof):
            assert step.expansions_right and step.difference_follows and step.verdict_follows
            assert step.difference_zero is step.sides_agree


@pytest.mark.parametrize(("left", "right", "difference", "verdict", "zero", "difference_follows", "verdict_follows"), [
    ("9x^2", "9x^2", "0", "agree", True, True, True),
    ("9x^2 - 25", "9x^2", "-25", "differ", False, True, True),  # a wrong side, the rest follows from it as written
    ("9x^2 - 25", "9x^2", "0", "agree", True, False, True),  # the difference slips; the verdict reads the difference
    ("9x^2", "9x^2", "0", "differ", True, True, False),
    ("9x^2", "9x^2", "x^", "agree", False, False, False),  # an unreadable difference follows from nothing
])
def test_in_the_difference_form_the_verdict_follows_the_difference_and_the_difference_the_sides(
        left: str, right: str, difference: str, verdict: str, zero: bool, difference_follows: bool,
        verdict_follows: bool) -> None:
    text = analysis(left, right, verdict).replace(f"side is {right}.", f"side is {right}, and left minus right is {difference}.")
    [step] = worked_steps(text, PROOF)
    assert (step.difference_zero, step.difference_follows, step.verdict_follows) == (zero, difference_follows,
                                                                                      verdict_follows)
    assert step.accuracy == pytest.approx((step.expansions_right + difference_follows + verdict_follows) / 3)
