"""``--goal``: the world checker's verdict printed beside a model's, for a problem of the ground-truth world.

A world problem's goal is the claims the checker decides its proofs against (a world row's
``goal`` column, e.g. ``(3a + 2b)^2 - (3a - 2b)^2 = 24ab``). Given to ``prove`` or ``verify``,
the checker reads the proof's text (``data.world.checker``) and the output carries its score and
first bad step beside the self-evaluation's or the verifier's, so a reader sees at once whether
the model is right. Goals are parsed before any model loads: a claim the checker cannot read is
a one-line error, not a late surprise. The checker (sympy, ~0.4 s to import) loads only when a
goal is given, so ``prove`` and ``verify`` without ``--goal`` do not pay for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from data.errors import InputError
from data.world.blame import blamed_step


def read_goal(claims: Sequence[str] | None) -> tuple[str, ...]:
    """The ``--goal`` claims, each checked to parse as a claim of the world; empty when none were given."""
    goal = tuple(claim.strip() for claim in claims or ())
    if not goal:
        return goal
    from data.world.checker import parse_goal
    from data.world.claims import ClaimError

    for claim in goal:
        if not claim:
            raise InputError("--goal is empty: give a claim such as '(a + b)^2 = a^2 + 2ab + b^2'")
        try:
            parse_goal((claim,))
        except ClaimError as error:
            raise InputError(f"--goal {claim!r} is not a claim the world's checker reads ({error})") from None
    return goal


def checker_verdict(goal: Sequence[str], proof: str, analyses: Sequence[str] = ()) -> dict[str, Any]:
    """The checker's score, first bad step and reason for ``proof``; with ``analyses``, the step each one blames."""
    from data.world.checker import check_goal

    verdict = check_goal(goal, proof)
    record: dict[str, Any] = {"goal": list(goal), "score": verdict.score, "first_bad_step": verdict.first_bad_step,
                              "reason": verdict.reason}
    if analyses:
        record["blamed_steps"] = [blamed_step(analysis) for analysis in analyses]
    return record


def checker_lines(checker: dict[str, Any], model_score: float | None, model_name: str) -> list[str]:
    """Text lines that set the checker's verdict beside the model's score (and, for analyses, the steps they blame)."""
    first_bad = checker["first_bad_step"]
    where = "" if first_bad is None else f", first bad step {first_bad}"
    shown = "format failure" if model_score is None else f"{model_score:g}"
    lines = [f"checker: {checker['score']:g}{where} ({checker['reason']})", f"{model_name}: {shown}"]
    if "blamed_steps" in checker:
        blamed = ", ".join("none" if step is None else str(step) for step in checker["blamed_steps"])
        lines.append(f"steps the analyses blame: {blamed}")
    return lines
