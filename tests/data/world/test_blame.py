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
