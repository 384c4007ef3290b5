"""The arithmetic family: expressions evaluated step by step, and a checker that holds each step to the one before."""

from __future__ import annotations

import random

import pytest

from data.world.checker import check
from data.world.claims import parse_claim
from data.world.config import LEVELS
from data.world.defects import inject
from data.world.expressions import form, parse
from data.world.families import blueprint
from data.world.families.arithmetic import TEMPLATES, Number, Operation, draw, operations, value, written

GOAL = [parse_claim("3·(4 + 5) - 2·7 = 13")]
CORRECT = """Step 1: 3·(4 + 5) - 2·7 = 3·9 - 2·7, by adding 4 and 5.
Step 2: 3·9 - 2·7 = 27 - 2·7, by multiplying.
Step 3: 27 - 2·7 = 27 - 14, by multiplying.
Step 4: 27 - 14 = 13."""


def test_a_step_by_step_evaluation_scores_1() -> None:
    verdict = check(GOAL, CORRECT)
    assert (verdict.score, verdict.first_bad_step) == (1.0, None)


@pytest.mark.parametrize(
    ("change", "first_bad", "status"),
    [
        (("27 - 2·7 = 27 - 14", "27 - 2·7 = 27 - 15"), 3, "false"),  # a wrong product
        (("Step 2: 3·9 - 2·7 = 27 - 2·7", "Step 2: 26 - 2·7 = 12"), 2, "does_not_follow"),  # true, but not the expression reached
        (("Step 3: 27 - 2·7", "Step 3: 20 + 7 - 2·7"), 3, "does_not_follow"),  # the value of step 2's, another expression
        (("Step 4: 27 - 14 = 13", "Step 4: 10 + 3 = 13"), 4, "ok"),  # true, from the goal's 13, but 27 - 14 is left behind
        (("Step 4: 27 - 14 = 13", "Step 4: 13 = 13"), 4, "ok"),  # true and in play, but the chain never reaches 13
    ],
)
def test_each_arithmetic_flaw_is_found_at_its_step(change: tuple[str, str], first_bad: int, status: str) -> None:
    verdict = check(GOAL, CORRECT.replace(*change))
    assert (verdict.score, verdict.first_bad_step) == (0.0, first_bad)
    assert verdict.steps[first_bad - 1].status == status


def test_a_number_is_in_play_as_written_and_one_line_is_a_proof() -> None:
    assert form("27 - 14") != form("13") and parse("27 - 14") == parse("13")
    assert form("3·9 - 2·7") == form("3 * 9 - (2*7)")
    assert form("2(a + b)") == form("2a + 2b")  # with variables, algebra as before
    assert check(GOAL, "Step 1: 3·(4 + 5) - 2·7 = 13.").score == 1.0  # evaluating needs no reason
    assert check(GOAL, "Step 1: 13 = 13.").score == 0.0


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("template", TEMPLATES)
def test_expressions_are_written_so_that_they_parse_to_their_value(template: str, level: int) -> None:
    rng = random.Random(f"{template}/{level}")
    for _ in range(25):
        tree = draw(rng, template, level)
        assert parse(written(tree)) == value(tree)
    assert written(Operation("·", Number(3), Number(-2))) == "3·(-2)"
    assert written(Operation("-", Number(-6), Operation("+", Number(2), Number(3)))) == "-6 - (2 + 3)"
    assert written(Operation("^", Number(-4), Number(2))) == "(-4)^2"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("template", TEMPLATES)
def test_level_1_evaluates_one_operation_a_step_and_higher_levels_several(template: str, level: int) -> None:
    plan = blueprint("arithmetic", template, random.Random(level), level)
    count = len(operations(draw(random.Random(level), template, level)))
    assert plan.problem.statement.endswith(".") and plan.problem.goal[0].right == plan.steps[-1].claim.right
    assert len(plan.steps) == count if level == 1 else len(plan.steps) <= count
    if level > 1 and template in ("sum_of_products", "bracket_product"):  # products side by side: done in one step
        assert len(plan.steps) < count


def test_defects_of_arithmetic_apply_or_say_they_do_not() -> None:
    applied = {kind: 0 for kind in ("wrong_expansion", "sign_error", "dropped_term", "wrong_coefficient", "non_sequitur",
                                    "false_conclusion", "unjustified_leap")}
    for template in TEMPLATES:
        for level in LEVELS:
            for seed in range(3):
                plan = blueprint("arithmetic", template, random.Random(seed), level)
                for kind in applied:
                    injected = inject(kind, plan.steps, random.Random(seed))
                    if injected is None:
                        continue
                    applied[kind] += 1
                    steps, at = injected
                    verdict = check(plan.problem.goal, "\n".join(step.render() for step in steps))
                    status = verdict.steps[at - 1].status
                    assert (verdict.score, verdict.first_bad_step) == (0.0, at)
                    assert status == ("does_not_follow" if kind == "non_sequitur" else "false"), (kind, status)
    assert applied.pop("unjustified_leap") == 0  # evaluating needs no reason, so no step can lose one
    assert all(applied.values()), applied
