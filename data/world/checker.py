"""Decide a proof's truth from its text: the score 0 / 0.5 / 1 and its first bad step.

What the scores mean in this world (the checker decides exactly this, nothing else):

- **1**: every step is a readable, true claim that follows from the problem or from
  earlier steps, every non-trivial step says why it holds, and together the steps
  establish every claim of the goal.
- **0.5**: as for 1, except that some non-trivial step is stated without a reason (an
  unjustified leap over a true step). The first such step is the first bad step.
- **0**: some step is unreadable, false, undecidable here, or does not follow; or the
  steps never establish the goal. The first such step is the first bad step (for a
  proof that ends without reaching its goal: its last step).

*Follows*, exactly: an equality follows when one of its sides is an expression already
in play (a side of the goal, of an earlier equality, the subject of an earlier fact);
its two sides then count as one. An expression with variables is in play up to algebra
(``2(a + b)`` is ``2a + 2b``); one of numbers only, as written (``27 - 14`` is not ``13``:
evaluating is the step, ``data.world.expressions.form``), so an arithmetic step must
continue from the expression before it (or lead to the goal's value), not from any with the
same value. A fact (``≥``, divisibility, a solution set) follows
either as an *elementary* fact about an expression in play (a sum of squares is ``≥ 0``;
a product with a run of ``m`` consecutive factors ``n + c`` and coefficient ``c0`` is a
multiple of any divisor of ``c0·m!``; a product of linear factors is zero exactly at
their roots) or as *derived*, when an equal expression already has that fact.

*Non-trivial*, exactly: an equality one of whose sides is not expanded (a power or
product of sums: expanding or factoring happens), and every elementary fact. Collecting
like terms and derived facts need no reason. Any non-empty reason counts: the checker
does not judge whether the reason given is the right one (a deliberate simplification).

A goal equality whose two sides are the same expression in play (``x + x = 2x``) must be
written out by some step; otherwise it would hold vacuously. A numeric goal (a base case
``1 = 1^2``, ``3·(4 + 5) - 2·7 = 13``) has two different sides as written, and the steps must
join them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import sympy

from data.world.claims import Claim, ClaimError, Undecidable, divisor, parse_claim
from data.world.expressions import ExpressionError, expansion, form, parse
from data.world.steps import Step, parse_steps

Status = Literal["ok", "unreadable", "false", "undecidable", "does_not_follow", "unjustified"]
BAD: frozenset[str] = frozenset({"unreadable", "false", "undecidable", "does_not_follow"})
Fact = tuple[object, ...]


@dataclass(frozen=True)
class StepVerdict:
    number: int
    status: Status
    detail: str = ""


@dataclass(frozen=True)
class Verdict:
    score: float
    first_bad_step: int | None
    """The number of the first bad step (see the module docstring); None for a score of 1 or no steps at all."""
    steps: tuple[StepVerdict, ...]
    readable: bool
    """False when the text holds no readable step at all."""
    reason: str

    def __post_init__(self) -> None:
        if self.score not in (0.0, 0.5, 1.0):
            raise ValueError(f"score must be 0, 0.5 or 1, got {self.score}")
        if (self.score == 1.0) != (self.first_bad_step is None and self.readable):
            raise ValueError("a score of 1 has no bad step, and every other score names one (or is unreadable)")


class Expressions:
    """Union-find over the expressions in play, with the facts known of each class."""

    def __init__(self) -> None:
        self.parent: dict[sympy.Expr, sympy.Expr] = {}
        self.facts: dict[sympy.Expr, set[Fact]] = {}

    def add(self, expression: sympy.Expr) -> None:
        if expression not in self.parent:
            self.parent[expression] = expression
            self.facts[expression] = set()

    def __contains__(self, expression: sympy.Expr) -> bool:
        return expression in self.parent

    def find(self, expression: sympy.Expr) -> sympy.Expr:
        root = expression
        while self.parent[root] != root:
            root = self.parent[root]
        self.parent[expression] = root
        return root

    def union(self, first: sympy.Expr, second: sympy.Expr) -> None:
        self.add(first)
        self.add(second)
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[b] = a
            self.facts[a] |= self.facts.pop(b)

    def facts_of(self, expression: sympy.Expr) -> set[Fact]:
        return self.facts[self.find(expression)] if expression in self else set()


def is_expanded(expression: sympy.Expr) -> bool:
    return expansion(expression) == expression


def sum_of_squares(expression: sympy.Expr) -> bool:
    """Written as a sum of even powers with positive coefficients (and a nonnegative constant)."""
    terms = expression.args if expression.is_Add else (expression,)
    return all(square_term(term) for term in terms)


def square_term(term: sympy.Expr) -> bool:
    if term.is_Number:
        return bool(term >= 0)
    if term.is_Pow:
        return term.exp.is_Integer and term.exp % 2 == 0
    if term.is_Mul:
        coefficient, rest = term.as_coeff_Mul()
        return coefficient > 0 and all(square_term(factor) for factor in sympy.Mul.make_args(rest))
    return False


def multiple_by_form(expression: sympy.Expr, modulus: int) -> bool:
    """A product ``c0 · (n + c1)(n + c2)...`` whose consecutive run of offsets makes it a multiple of ``modulus``."""
    coefficient, rest = expression.as_coeff_Mul()
    if not coefficient.is_Integer:
        return False
    best = 1
    by_variable: dict[sympy.Symbol, set[int]] = {}
    for factor in sympy.Mul.make_args(rest):
        content, factor = factor.as_content_primitive()  # sympy writes 4(n + 3) as 4n + 12
        if not content.is_Integer:
            return False
        coefficient *= content
        base, _ = factor.as_base_exp()
        if base.is_Symbol:
            by_variable.setdefault(base, set()).add(0)
            continue
        offset = base - next(iter(base.free_symbols)) if len(base.free_symbols) == 1 else None
        if offset is not None and offset.is_Integer:
            by_variable.setdefault(next(iter(base.free_symbols)), set()).add(int(offset))
    for offsets in by_variable.values():
        run = longest_run(offsets)
        best = max(best, math.factorial(run))
    return (int(coefficient) * best) % modulus == 0


def longest_run(values: set[int]) -> int:
    longest = 0
    for value in values:
        if value - 1 not in values:
            length = 1
            while value + length in values:
                length += 1
            longest = max(longest, length)
    return longest


def roots_by_form(expression: sympy.Expr, variable: str, roots: set[sympy.Expr]) -> bool:
    """A product of linear factors in ``variable`` (times a constant), zero exactly at ``roots``."""
    unknown = sympy.Symbol(variable)
    found = set()
    for factor in sympy.Mul.make_args(expression):
        base, _ = factor.as_base_exp()
        if not base.has(unknown):
            if base == 0:
                return False
            continue
        polynomial = sympy.Poly(base, unknown)
        if polynomial.degree() != 1 or base.free_symbols != {unknown}:
            return False
        a, b = polynomial.all_coeffs()
        found.add(-b / a)
    return found == roots


class Derivation:
    """Walks a proof's steps against a goal (see the module docstring)."""

    def __init__(self, goal: Sequence[Claim]) -> None:
        self.goal = tuple(goal)
        self.known = Expressions()
        self.stated: list[Claim] = []
        for claim in self.goal:
            for side in goal_seeds(claim):
                self.known.add(side)

    def step(self, step: Step) -> StepVerdict:
        claim = step.claim
        if claim is None:
            return StepVerdict(step.number, "unreadable", "no claim of this world")
        try:
            true = claim.is_true()
        except Undecidable as error:
            return StepVerdict(step.number, "undecidable", str(error))
        except (ExpressionError, ClaimError) as error:
            return StepVerdict(step.number, "unreadable", str(error))
        if not true:
            return StepVerdict(step.number, "false", f"{claim.render()} is false")
        follows, elementary = self.link(claim)
        if not follows:
            return StepVerdict(step.number, "does_not_follow", f"{claim.render()} does not follow from the goal or earlier steps")
        self.stated.append(claim)
        needs_reason = elementary or (claim.kind == "equal" and not (is_expanded(parse(claim.left)) and is_expanded(parse(claim.right))))
        if needs_reason and not step.reason:
            return StepVerdict(step.number, "unjustified", "a non-trivial step without a reason")
        return StepVerdict(step.number, "ok")

    def link(self, claim: Claim) -> tuple[bool, bool]:
        """(follows, elementary) for a true claim, recording what it establishes."""
        if claim.kind == "equal":
            left, right = form(claim.left), form(claim.right)
            if left not in self.known and right not in self.known:
                return False, False
            self.known.union(left, right)
            return True, False
        subject = claim.subject()
        if subject not in self.known:
            return False, False
        fact = self.fact(claim)
        if fact in self.known.facts_of(subject) or any(implies(known, fact) for known in self.known.facts_of(subject)):
            return True, False
        if self.elementary(claim, subject):
            self.known.facts[self.known.find(subject)].add(fact)
            return True, True
        return False, False

    @staticmethod
    def fact(claim: Claim) -> Fact:
        if claim.kind == "at_least":
            return ("nonnegative",)
        if claim.kind == "divisible":
            return ("multiple", divisor(claim.right))
        return ("roots", claim.variable, frozenset(parse(root) for root in claim.roots))

    @staticmethod
    def elementary(claim: Claim, subject: sympy.Expr) -> bool:
        if claim.kind == "at_least":
            return parse(claim.right) == 0 and sum_of_squares(subject)
        if claim.kind == "divisible":
            return multiple_by_form(subject, divisor(claim.right))
        return parse(claim.right) == 0 and roots_by_form(subject, claim.variable, {parse(root) for root in claim.roots})

    def established(self, claim: Claim) -> bool:
        if claim.kind == "equal":
            left, right = form(claim.left), form(claim.right)
            if left == right:
                return any(stated.kind == "equal" and form(stated.left) == left and form(stated.right) == right
                           for stated in self.stated)
            return self.known.find(left) == self.known.find(right)
        fact = self.fact(claim)
        return any(known == fact or implies(known, fact) for known in self.known.facts_of(claim.subject()))


def implies(known: Fact, wanted: Fact) -> bool:
    """A multiple of 6 is a multiple of 3; other facts imply only themselves."""
    if known[0] == wanted[0] == "multiple":
        return int(known[1]) % int(wanted[1]) == 0  # type: ignore[call-overload]
    return known == wanted


def goal_seeds(claim: Claim) -> tuple[sympy.Expr, ...]:
    if claim.kind == "equal":
        return form(claim.left), form(claim.right)
    return (claim.subject(),)


def check_steps(goal: Sequence[Claim], steps: Sequence[Step]) -> Verdict:
    """The verdict on already-parsed steps (see :func:`check`)."""
    if not steps:
        return Verdict(0.0, None, (), False, "no step of this world could be read")
    derivation = Derivation(goal)
    verdicts = tuple(derivation.step(step) for step in steps)
    bad = [verdict for verdict in verdicts if verdict.status in BAD]
    if bad:
        return Verdict(0.0, bad[0].number, verdicts, True, f"step {bad[0].number}: {bad[0].detail}")
    missing = [claim for claim in goal if not derivation.established(claim)]
    if missing:
        return Verdict(0.0, steps[-1].number, verdicts, True, f"the steps never establish {missing[0].render()}")
    unjustified = [verdict for verdict in verdicts if verdict.status == "unjustified"]
    if unjustified:
        return Verdict(0.5, unjustified[0].number, verdicts, True, f"step {unjustified[0].number}: {unjustified[0].detail}")
    return Verdict(1.0, None, verdicts, True, "every step is true, follows and is justified; the goal is established")


def check(goal: Sequence[Claim], proof: str) -> Verdict:
    """Decide ``proof`` (text with ``Step N:`` lines) against the claims of ``goal``."""
    return check_steps(goal, parse_steps(proof))


@functools.lru_cache(maxsize=1024)
def parse_goal(goal: tuple[str, ...]) -> tuple[Claim, ...]:
    """The claims of a goal written as text, parsed once per goal (rewards and evals check many proofs of one problem)."""
    return tuple(parse_claim(claim) for claim in goal)


def check_goal(goal: Sequence[str], proof: str) -> Verdict:
    """``check`` against a goal written as text (a problem row's ``goal`` column); ``ClaimError`` if a claim does not parse."""
    return check(parse_goal(tuple(goal)), proof)
