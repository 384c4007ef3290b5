"""data.world.checker: the score and first bad step of hand-written proofs, decided from their text."""

from __future__ import annotations

import pytest

from data.world.checker import check
from data.world.claims import parse_claim

AM_GM = [parse_claim("a^2 + b^2 >= 2ab")]
CORRECT = """Proof.
Step 1: a^2 + b^2 - 2ab = (a - b)^2, by completing the square.
Step 2: Then (a - b)^2 ≥ 0, since a square is never negative.
Step 3: Hence a^2 + b^2 >= 2ab."""


def test_a_correct_proof_scores_1() -> None:
    verdict = check(AM_GM, CORRECT)
    assert (verdict.score, verdict.first_bad_step, verdict.readable) == (1.0, None, True)
    assert [step.status for step in verdict.steps] == ["ok", "ok", "ok"]


@pytest.mark.parametrize(
    ("change", "score", "first_bad", "status"),
    [
        (("(a - b)^2, by", "(a + b)^2, by"), 0.0, 1, "false"),
        ((", since a square is never negative", ""), 0.5, 2, "unjustified"),
        ((", by completing the square", ""), 0.5, 1, "unjustified"),
        (("(a - b)^2 ≥ 0", "(a + b)^2 ≥ 0"), 0.0, 2, "does_not_follow"),
        (("Step 2: Then (a - b)^2 ≥ 0", "Step 2: Then (a - b)^2 is positive"), 0.0, 2, "unreadable"),
        (("Hence a^2 + b^2 >= 2ab", "Hence a^2 + b^2 >= 3ab"), 0.0, 3, "false"),
    ],
)
def test_each_kind_of_flaw_is_found_at_its_step(change: tuple[str, str], score: float, first_bad: int, status: str) -> None:
    verdict = check(AM_GM, CORRECT.replace(*change))
    assert (verdict.score, verdict.first_bad_step) == (score, first_bad)
    assert verdict.steps[first_bad - 1].status == status


def test_restating_the_goal_is_not_a_proof() -> None:
    verdict = check(AM_GM, "Step 1: a^2 + b^2 >= 2ab, by a well-known inequality.")
    assert (verdict.score, verdict.first_bad_step) == (0.0, 1)
    assert verdict.steps[0].status == "does_not_follow"


def test_stopping_short_of_the_goal_blames_the_last_step() -> None:
    verdict = check(AM_GM, "Step 1: a^2 + b^2 - 2ab = (a - b)^2, by completing the square.")
    assert (verdict.score, verdict.first_bad_step) == (0.0, 1) and "never establish" in verdict.reason


def test_text_without_steps_is_unreadable_and_scores_0() -> None:
    verdict = check(AM_GM, "By AM-GM the inequality is clear.")
    assert (verdict.score, verdict.first_bad_step, verdict.readable) == (0.0, None, False)


def test_a_numeric_base_case_must_be_written_out() -> None:
    goal = [parse_claim("1 = 1^2"), parse_claim("n^2 + (2(n + 1) - 1) = (n + 1)^2")]
    inductive = ("Step 2: n^2 + (2(n + 1) - 1) = n^2 + 2n + 1, by adding the next term.\n"
                 "Step 3: n^2 + 2n + 1 = (n + 1)^2, by factoring.")
    assert check(goal, "Step 1: 1 = 1^2, since for n = 1 the sum is 1.\n" + inductive).score == 1.0
    assert check(goal, inductive).score == 0.0


def test_divisibility_and_solution_sets_follow_from_their_factored_forms() -> None:
    divisible = [parse_claim("n^3 - n is divisible by 3")]
    proof = ("Step 1: n^3 - n = (n - 1)n(n + 1), by factoring.\n"
             "Step 2: (n - 1)n(n + 1) is divisible by 6, since one of three consecutive integers is a multiple of 3.\n"
             "Step 3: So n^3 - n is divisible by 3.")
    assert check(divisible, proof).score == 1.0  # a multiple of 6 is a multiple of 3
    roots = [parse_claim("x^2 - 5x + 6 = 0 exactly when x = 2 or x = 3")]
    proof = ("Step 1: x^2 - 5x + 6 = (x - 2)(x - 3), by factoring.\n"
             "Step 2: (x - 2)(x - 3) = 0 exactly when x = 2 or x = 3, since a product is zero when a factor is.\n"
             "Step 3: Hence the solutions of x^2 - 5x + 6 = 0 are x = 2 and x = 3.")
    assert check(roots, proof).score == 1.0
    assert check(roots, proof.replace("x = 2 and x = 3.", "x = 2 and x = 3 and x = 4.")).first_bad_step == 3
