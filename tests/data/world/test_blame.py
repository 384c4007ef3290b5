"""data.world.blame: the step an analysis blames."""

from __future__ import annotations

import pytest

from data.world.blame import blamed_step


@pytest.mark.parametrize(
    ("analysis", "step"),
    [
        ("Step 1 is correct. Step 2 is wrong: it drops a term.", 2),
        ("Steps 1 to 3 are correct. The error is in step 4, where the sign flips.", 4),
        ("I checked Step 1; it holds. But Step 3 does not follow from Step 2.", 3),
        ("Step 2 states x^2 ≥ 0 without any justification.", 2),
        ("Every step is correct. I found no issues.", None),
        ("The proof is wrong somewhere.", None),  # blames no step: never localises
        ("step 1: fine.\nstep 5 has a mistake", 5),
    ],
)
def test_the_first_step_named_in_a_problem_sentence(analysis: str, step: int | None) -> None:
    assert blamed_step(analysis) == step


@pytest.mark.parametrize(
    ("analysis", "step"),
    [
        # How the cold-start verifier writes: the step in one sentence, the verdict in the next.
        ("Step 1 claims (a + b)^2 = a^2 + b^2, but the left side expands to a^2 + 2ab + b^2. "
         "Because of this the argument fails.", 1),
        ("Step 1 holds. Step 2 states x = 3. But 3 is not a root. This is false.", 2),
        ("Step 2 is correct. The argument fails.", None),  # the antecedent was checked, not blamed
        ("I checked Step 3, x^2 + 5 ≥ 2x; it holds. The proof is therefore invalid.", None),
        ("Step 1 states X. There is no gap.", None),  # a denial reports no problem
        ("Step 3 is false. Step 1 states X. The argument fails.", 3),  # a named blame wins over an antecedent
    ],
)
def test_a_problem_sentence_without_a_step_points_back_at_its_antecedent(analysis: str, step: int | None) -> None:
    assert blamed_step(analysis) == step
