"""Flaws of named kinds, injected into a correct proof at a chosen step.

Each injector takes a correct proof's steps and a ``random.Random`` and returns the
flawed steps and the step it changed, or None where the kind does not apply to that proof
(a proof with no expansion has no wrong expansion). A changed right-hand side is carried
into the next step's left-hand side, so the flawed proof still reads as one chain and the
flaw has to be found in the mathematics, not in a seam of the text.

The injector only *proposes*: the truth of the flawed proof, its score and first bad step,
is what ``data.world.checker`` decides from the text (``data.world.proofs``). The kinds:

- ``wrong_expansion``: a power of a sum expanded term by term (``(a + b)^2 = a^2 + b^2``); in
  arithmetic, a product distributed over the first term only (``3·(4 + 5) = 3·4 + 5``).
- ``sign_error``: one ``+`` turned into ``-`` or back.
- ``dropped_term``: one term of a sum left out.
- ``wrong_coefficient``: one coefficient changed.
- ``non_sequitur``: a true step about something the proof has not reached (in arithmetic: an
  expression with one number changed, which no step wrote).
- ``false_conclusion``: the last step claims more than was shown.
- ``unjustified_leap``: a non-trivial step's reason removed (the step stays true); never in
  arithmetic, whose steps need no reason.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import replace

import sympy

from data.world.checker import Derivation
from data.world.claims import Claim
from data.world.config import DEFECTS
from data.world.expressions import ExpressionError, expansion, form, parse, render, top_level_terms
from data.world.steps import Step

Injected = tuple[tuple[Step, ...], int]


def false_claim(claim: Claim) -> bool:
    try:
        return not claim.is_true()
    except (ValueError, ExpressionError):
        return False


def with_right(steps: tuple[Step, ...], index: int, right: str) -> tuple[Step, ...]:
    """Steps with step ``index``'s right side replaced, and the next step continuing from it."""
    claim = steps[index].claim
    assert claim is not None
    changed = list(steps)
    changed[index] = replace(steps[index], claim=replace(claim, right=right))
    following = steps[index + 1].claim if index + 1 < len(steps) else None
    if following is not None and following.left == claim.right:
        changed[index + 1] = replace(steps[index + 1], claim=replace(following, left=right))
    return tuple(changed)


def equality_steps(steps: tuple[Step, ...]) -> list[int]:
    return [index for index, step in enumerate(steps) if step.claim is not None and step.claim.kind == "equal"]


def rewrite_right(steps: tuple[Step, ...], rng: random.Random, rewrite: Callable[[str, random.Random], list[str]]) -> Injected | None:
    """Change one equality's right side by ``rewrite`` (candidates), keeping the first change that makes it false."""
    indices = equality_steps(steps)
    rng.shuffle(indices)
    for index in indices:
        claim = steps[index].claim
        assert claim is not None
        candidates = rewrite(claim.right, rng)
        rng.shuffle(candidates)
        for candidate in candidates:
            try:
                parse(candidate)
            except ExpressionError:
                continue
            if false_claim(replace(claim, right=candidate)):
                return with_right(steps, index, candidate), steps[index].number
    return None


def freshman(expression: sympy.Expr) -> sympy.Expr:
    """The classic wrong expansions: a power of a sum taken term by term, a product of two sums without its cross terms."""
    def powered(node: sympy.Expr) -> bool:
        return bool(node.is_Pow and node.base.is_Add and node.exp.is_Integer and node.exp > 1)

    def product(node: sympy.Expr) -> bool:
        return bool(node.is_Mul and sum(1 for factor in node.args if factor.is_Add) >= 2)

    def outer_terms(node: sympy.Expr) -> sympy.Expr:
        sums = [factor for factor in node.args if factor.is_Add]
        rest = sympy.Mul(*(factor for factor in node.args if not factor.is_Add))
        first, second = sums[0].as_ordered_terms(), sums[1].as_ordered_terms()
        return rest * sympy.Mul(*sums[2:]) * (first[0] * second[0] + first[-1] * second[-1])

    wrong = expression.replace(powered, lambda node: sympy.Add(*(term ** node.exp for term in node.base.args)))
    return wrong.replace(product, outer_terms)


NUMERIC = re.compile(r"^[^a-z]*$")
"""A text of numbers only (an arithmetic step)."""
MISEXPANSIONS = (
    (re.compile(r"(?<![\d)^])(\d+)·\((\d+) ([+-]) (\d+)\)"), r"\1·\2 \3 \4"),  # 3·(4 + 5) → 3·4 + 5
    (re.compile(r"\((\d+) ([+-]) (\d+)\)\^(\d+)"), r"\1^\4 \2 \3^\4"),  # (4 + 5)^2 → 4^2 + 5^2
)


def numeric(claim: Claim) -> bool:
    return claim.kind == "equal" and bool(NUMERIC.match(claim.left)) and bool(NUMERIC.match(claim.right))


def misexpanded(text: str) -> str | None:
    """``text`` with its first bracket expanded the classic wrong way, or None where it has none."""
    for pattern, wrong in MISEXPANSIONS:
        changed = pattern.sub(wrong, text, count=1)
        if changed != text:
            return changed
    return None


def wrong_expansion(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    for index in equality_steps(steps):
        claim = steps[index].claim
        assert claim is not None
        if numeric(claim):
            wrong_text = misexpanded(claim.left)
            if wrong_text is not None and false_claim(replace(claim, right=wrong_text)):
                return with_right(steps, index, wrong_text), steps[index].number
            continue
        left = parse(claim.left)
        wrong = sympy.expand(freshman(left))
        if wrong != expansion(left):
            return with_right(steps, index, render(wrong)), steps[index].number
    return None


def flipped_signs(text: str, rng: random.Random) -> list[str]:
    positions = [match.start() for match in re.finditer(r" [+-] ", text)]
    return [text[:at] + (" - " if text[at + 1] == "+" else " + ") + text[at + 3:] for at in positions]


def dropped_terms(text: str, rng: random.Random) -> list[str]:
    terms = top_level_terms(text)
    if len(terms) < 2:
        return []
    options = []
    for drop in range(len(terms)):
        kept = [term for position, term in enumerate(terms) if position != drop]
        first = kept[0]
        kept[0] = first[2:] if first.startswith("+ ") else "-" + first[2:] if first.startswith("- ") else first
        options.append(" ".join(kept))
    return options


def changed_coefficients(text: str, rng: random.Random) -> list[str]:
    options = []
    for match in re.finditer(r"(?<![\^\d])\d+", text):
        value = int(match[0])
        for new in {value + 1, value * 2, max(1, value - 1)} - {value}:
            options.append(text[: match.start()] + str(new) + text[match.end():])
    for match in re.finditer(r"(?<![\d\^a-z)])([a-z])", text):
        options.append(text[: match.start()] + "2" + text[match.start():])
    return options


def sign_error(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    return rewrite_right(steps, rng, flipped_signs)


def dropped_term(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    return rewrite_right(steps, rng, dropped_terms)


def wrong_coefficient(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    return rewrite_right(steps, rng, changed_coefficients)


def shifted(text: str, variable: str) -> str:
    """``text`` about ``variable + 1`` instead: true facts about it are about something else."""
    return render(parse(text).subs(sympy.Symbol(variable), sympy.Symbol(variable) + 1))


def off_track(steps: tuple[Step, ...], claim: Claim, rng: random.Random) -> Claim | None:
    """A true arithmetic step like ``claim`` about an expression no step of ``steps`` wrote: one number changed on the
    left (and where the step carried it, on the right; else the right is the new value)."""
    in_play = {form(side) for step in steps if step.claim is not None and step.claim.kind == "equal"
               for side in (step.claim.left, step.claim.right)}
    numbers = list(re.finditer(r"(?<![\^\d])\d+", claim.left))
    rng.shuffle(numbers)
    for number in numbers:
        new = str(int(number[0]) + rng.randint(1, 3))
        left = claim.left[: number.start()] + new + claim.left[number.end():]
        rights = [claim.right[: match.start()] + new + claim.right[match.end():]
                  for match in re.finditer(rf"(?<![\^\d]){number[0]}(?!\d)", claim.right)]
        for right in [*rights, render(parse(left))]:
            candidate = Claim("equal", left, right)
            if not false_claim(candidate) and form(left) not in in_play and form(right) not in in_play:
                return candidate
    return None


def non_sequitur(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    """Replace a middle step by the same kind of true statement about a shifted expression."""
    candidates = list(range(1, len(steps))) if len(steps) > 1 else [0]
    rng.shuffle(candidates)
    for index in candidates:
        claim = steps[index].claim
        if claim is None:
            continue
        if numeric(claim):
            moved = off_track(steps, claim, rng)
            if moved is not None:
                changed = list(steps)
                changed[index] = replace(steps[index], claim=moved)
                return tuple(changed), steps[index].number
            continue
        variables = sorted(str(symbol) for symbol in parse(claim.left).free_symbols)
        if not variables:
            continue
        variable = rng.choice(variables)
        if claim.kind == "equal":
            moved = shifted(claim.left, variable)
            new = Claim("equal", moved, render(sympy.factor(parse(moved))) if rng.random() < 0.5 else render(expansion(parse(moved))))
            if new.left == new.right:
                new = Claim("equal", moved, render(expansion(parse(moved))))
        elif claim.kind == "divisible" or claim.kind == "at_least" and parse(claim.right) == 0:
            new = replace(claim, left=shifted(claim.left, variable))
        elif claim.kind == "at_least":
            new = replace(claim, left=shifted(claim.left, variable), right=shifted(claim.right, variable))
        elif claim.kind == "solutions" and parse(claim.right) == 0:
            roots = tuple(render(parse(root) - 1) for root in claim.roots)
            new = replace(claim, left=shifted(claim.left, claim.variable), roots=roots)
        else:
            continue
        if new == claim or false_claim(new):
            continue
        changed = list(steps)
        changed[index] = replace(steps[index], claim=new)
        return tuple(changed), steps[index].number
    return None


def false_conclusion(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    last = steps[-1]
    claim = last.claim
    if claim is None:
        return None
    if claim.kind == "divisible":
        candidates = [replace(claim, right=str(int(claim.right) * factor)) for factor in (2, 3, 5)]
    elif claim.kind == "solutions":
        extra = str(int(parse(claim.roots[-1])) + rng.randint(1, 3))
        candidates = [replace(claim, roots=(*claim.roots, extra)), replace(claim, roots=claim.roots[:-1] + (extra,))]
    else:
        candidates = [replace(claim, right=option) for option in changed_coefficients(claim.right, rng)]
    rng.shuffle(candidates)
    for candidate in candidates:
        if candidate.kind == "solutions" and len(set(candidate.roots)) != len(candidate.roots):
            continue
        if false_claim(candidate):
            changed = list(steps)
            changed[-1] = replace(last, claim=candidate)
            return tuple(changed), last.number
    return None


def unjustified_leap(steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    """Drop the reason of a step that needs one: expanding or factoring, or an elementary fact."""
    needing = []
    for index, step in enumerate(steps):
        if not step.reason or step.claim is None:
            continue
        claim = step.claim
        expanded_sides = claim.kind == "equal" and parse(claim.left) == expansion(parse(claim.left)) and \
            parse(claim.right) == expansion(parse(claim.right))
        if claim.kind == "equal" and not expanded_sides or claim.kind != "equal" and Derivation.elementary(claim, claim.subject()):
            needing.append(index)
    if not needing:
        return None
    index = rng.choice(needing)
    changed = list(steps)
    changed[index] = replace(steps[index], reason="")
    return tuple(changed), steps[index].number


INJECTORS: dict[str, Callable[[tuple[Step, ...], random.Random], Injected | None]] = {
    "wrong_expansion": wrong_expansion,
    "sign_error": sign_error,
    "dropped_term": dropped_term,
    "wrong_coefficient": wrong_coefficient,
    "non_sequitur": non_sequitur,
    "false_conclusion": false_conclusion,
    "unjustified_leap": unjustified_leap,
}


def inject(kind: str, steps: tuple[Step, ...], rng: random.Random) -> Injected | None:
    """The steps with a ``kind`` flaw and the number of the step changed, or None where ``kind`` does not apply."""
    if kind not in INJECTORS:
        raise ValueError(f"unknown defect {kind!r}; known: {', '.join(DEFECTS)}")
    return INJECTORS[kind](tuple(steps), rng)
