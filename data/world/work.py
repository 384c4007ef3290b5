"""How much of a verifier's shown work on a world proof is true: the expansions it writes and the verdict it draws.

The world's worked analyses (``training.role_data.world_critiques.worked_step``) check an
equality step by expanding both sides and comparing them, verdict last:
``Step 2: <claim>. Expanded, the left side is A and the right side is B. They agree, so ...``.
This module reads that work back from any analysis and checks each worked step against the
proof itself: A and B must be the true expansions of the two sides of the proof's Step 2
(``expansions_right``), and the verdict must follow from A and B as written, "agree" exactly
when they are equal (``verdict_follows``). A step the analysis names that the proof lacks, or
that is not an equality, has no right expansions. In the difference form (``worked_step(...,
difference=True)``: ``... the right side is B, and left minus right is D. They agree ...``) D must
be A − B as written (``difference_follows``) and the verdict must follow from D: "agree" exactly
when D is 0.
Before the work, ``<claim>`` must be the proof's own Step 2 (``claim_restated``: the same two
polynomials), and each side is checked on its own (``true_sides``): a verifier that restates a claim
the proof does not make has lost the defect before it compares anything.

Why: the bundled world model's verdicts ignore its own work. On test_in (2026-12-05), its two
sides differ in 56 % of its checks of a false step and 30 % of a true one, yet it says "They
differ" 22 % of the time when the sides it wrote differ and 19 % when they agree; verifier GRPO
rewarded only for the verdict lowered both rates alike (benchmarks/world_verifier_rl.py, the
``checker`` arm). A rater that reads the work pays for the verdict that follows from it
(``rewards.meta = 'checker_work'``); neither it nor fine-tuning on analyses whose verdict must read
the sides made this model read them. Fine-tuned on the difference form with slips, its verdict
follows D (differ 60 % after a non-zero D, 39 % after 0), but its sides and its D are mostly wrong, so
it still cannot tell a true step from a false one (docs/results/world-model-verifier-rl.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean
from types import MappingProxyType

import sympy

from data.world.expressions import ExpressionError, parse, render
from data.world.steps import parse_steps

COMPARED_SIDES = re.compile(r"Expanded, the left side is (.+?) and the right side is (?P<right>.+?)"
                            r"(?:, and left minus right is (.+?))?\. They (?P<verdict>agree|differ)\b", re.DOTALL)
"""The comparison that ends a worked step, or a line of a comparison drill; groups: left, right, difference, verdict."""
WORKED_STEP = re.compile(r"Step (\d+):((?:(?!Step \d+:).)*?)" + COMPARED_SIDES.pattern, re.DOTALL)
"""One worked step of an analysis; groups: step number, restated claim, left side, right side, difference, verdict."""


def expanded_sides(left: str, right: str) -> str:
    """The comparison's sentence up to its verdict, as analyses and drills write it (:data:`COMPARED_SIDES` reads it)."""
    return f"Expanded, the left side is {left} and the right side is {right}"


@dataclass(frozen=True)
class WorkedStep:
    """One step an analysis worked out: which step, whether its expansions are true, what they and its verdict say."""

    step: int
    expansions_right: bool
    """Both sides written are the true expansions of the proof's step."""
    sides_agree: bool
    """The two sides as written are equal."""
    says_agree: bool
    """The verdict: "They agree" (else "They differ")."""
    difference_zero: bool | None = None
    """The difference form (``, and left minus right is D``): D is 0; None when the analysis writes no difference."""
    difference_follows: bool | None = None
    """D is left minus right of the sides as written, right or wrong; None when no difference is written."""
    claim_restated: bool | None = None
    """The claim the analysis restates before its work has the proof's two sides (as polynomials); None when the proof
    has no such equality step or the restatement is not one equality."""
    true_sides: tuple[bool, bool] | None = None
    """Whether the left and the right side written are each the true expansion of that side of the proof's step (which
    side a miscomputation is on); None when the proof has no such equality step."""

    @property
    def verdict_follows(self) -> bool:
        """The verdict is the one the work just before it gives, right or wrong: the difference's 0 when one is written,
        else the two sides' equality."""
        return self.says_agree == (self.sides_agree if self.difference_zero is None else self.difference_zero)

    def __post_init__(self) -> None:
        if self.step < 1:
            raise ValueError(f"a worked step is numbered from 1, got {self.step}")

    @property
    def accuracy(self) -> float:
        """The share of its checks that hold: true expansions, a difference that follows from them (when one is
        written) and a verdict that follows from the work just before it."""
        checks = [self.expansions_right, self.verdict_follows]
        if self.difference_follows is not None:
            checks.append(self.difference_follows)
        return fmean(checks)


def expanded(text: str) -> sympy.Expr | None:
    try:
        return sympy.expand(parse(text))
    except (ExpressionError, sympy.SympifyError, TypeError, ValueError, RecursionError):
        return None


def same(first: str, second: str) -> bool:
    """Equal as the analysis wrote them: the same text, or the same polynomial once both are expanded."""
    if first.strip() == second.strip():
        return True
    left, right = expanded(first), expanded(second)
    return left is not None and right is not None and sympy.expand(left - right) == 0


@lru_cache(maxsize=4096)
def true_expansions(proof: str) -> Mapping[int, tuple[str, str]]:
    """The expansions of both sides of each equality step of ``proof``, rendered as the world writes them (computed once
    per proof: a proof's many analyses, and a GRPO group's rollouts, are checked against the same one)."""
    sides: dict[int, tuple[str, str]] = {}
    for step in parse_steps(proof):
        if step.claim is not None and step.claim.kind == "equal":
            left, right = expanded(step.claim.left), expanded(step.claim.right)
            if left is not None and right is not None:
                sides[step.number] = (render(left), render(right))
    return MappingProxyType(sides)


def worked_steps(analysis: str, proof: str) -> list[WorkedStep]:
    """Every ``Step N: ... Expanded, ... They agree|differ`` of ``analysis``, checked against ``proof``."""
    truth = true_expansions(proof)
    checked: list[WorkedStep] = []
    for number, claim, left, right, difference, verdict in WORKED_STEP.findall(analysis):
        expected = truth.get(int(number))
        sides = None if expected is None else (same(left, expected[0]), same(right, expected[1]))
        if int(number) >= 1:
            checked.append(WorkedStep(int(number), sides is not None and all(sides), same(left, right), verdict == "agree",
                                      *(difference_checks(left, right, difference) if difference else (None, None)),
                                      claim_restated=None if expected is None else restated(claim, expected),
                                      true_sides=sides))
    return checked


def restated(claim: str, expected: tuple[str, str]) -> bool | None:
    """Whether ``claim`` (``Step N: L = R.`` as an analysis restates it) has the sides ``expected`` as polynomials;
    None when it is not one equality."""
    sides = claim.strip().rstrip(".").split(" = ")
    if len(sides) != 2:
        return None
    return same(sides[0], expected[0]) and same(sides[1], expected[1])


def difference_checks(left: str, right: str, difference: str) -> tuple[bool, bool]:
    """Whether the written difference is 0, and whether it is left minus right of the sides as written (unreadable sides
    or difference: it does not follow)."""
    zero = difference.strip() == "0"
    written, left_value, right_value = expanded(difference), expanded(left), expanded(right)
    if written is None or left_value is None or right_value is None:
        return zero, False
    return zero, sympy.expand(written - (left_value - right_value)) == 0


def work_accuracy(analysis: str, proof: str) -> float | None:
    """Mean accuracy of the analysis's worked steps; None when it works out none (nothing to check)."""
    checked = worked_steps(analysis, proof)
    return fmean(step.accuracy for step in checked) if checked else None
