"""``induction``: a closed form of a finite sum, proved by a base case and the inductive step.

Level 1 scales each sum by up to 5 (the original world). Levels 2 and 3 scale by up to 12 and
15 and add a constant to every term (``3(2i - 1) + 4``: the closed form gains ``4n``), the
constant kept so that the first term stays positive.
"""

from __future__ import annotations

import random

import sympy

from data.world.claims import Claim
from data.world.expressions import parse, render
from data.world.families.text import bracketed, expanded, pick, plus, substitute, times
from data.world.problems import Blueprint, problem
from data.world.steps import Step

INDUCTION_SUMS: dict[str, tuple[str, str]] = {
    # template: (term f(i), closed form F(n)) with F(n) - F(n - 1) = f(n) and F(0) = 0
    "odd_numbers": ("2i - 1", "n^2"),
    "even_numbers": ("2i", "n(n + 1)"),
    "hex_numbers": ("3i^2 - 3i + 1", "n^3"),
    "cubes": ("4i^3", "n^2(n + 1)^2"),
    "arithmetic": ("", ""),
}
TEMPLATES = tuple(INDUCTION_SUMS)


def sum_of(rng: random.Random, template: str, level: int) -> tuple[str, str]:
    """(the term f(i), the closed form F(n)) of one drawn sum."""
    term, closed = INDUCTION_SUMS[template]
    n = sympy.Symbol("n")
    if template == "arithmetic":
        most = (4, 9, 15)[level - 1]
        c = rng.randint(1, most)
        d = rng.randint(-3, 3) if level == 1 else rng.randint(1 - 2 * c, most)
        term = plus(times(2 * c, "i"), str(d)) if d else times(2 * c, "i")
        return term, render(sympy.factor(c * n * (n + 1) + d * n))
    # the same sum scaled: c times each term, c times the closed form (and at levels 2 and 3, d more per term)
    scale = rng.randint(1, (5, 12, 15)[level - 1])
    shift = 0 if level == 1 else rng.randint(1 - scale * int(parse(term).subs(sympy.Symbol("i"), 1)), (9, 15)[level - 2])
    if scale > 1 or shift:
        shifted = f"{scale}({term})" + (f" + {shift}" if shift > 0 else f" - {-shift}" if shift else "")
        term, closed = expanded(shifted), render(sympy.factor(scale * parse(closed) + shift * n))
    return term, closed


def induction(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    i, n = sympy.Symbol("i"), sympy.Symbol("n")
    term, closed = sum_of(rng, template, level)
    first_terms = " + ".join(render(parse(term).subs(i, value)) for value in (1, 2, 3))
    last = bracketed(substitute(term, "i", "n"))
    text = pick(rng, f"Prove by induction that {first_terms} + ... + {last} = {closed} for every integer n ≥ 1.",
                f"Show that the sum of the first n terms of {first_terms}, ... (the i-th term is {term}) is {closed}.",
                f"Prove that for every positive integer n, {first_terms} + ... + {last} = {closed}.")
    base_left = render(parse(term).subs(i, 1))
    base_right = substitute(closed, "n", "1")
    step_left = f"{closed} + {bracketed(substitute(term, 'i', '(n + 1)'))}"
    step_right = render(sympy.factor(parse(closed).subs(n, n + 1)))
    base, inductive = Claim("equal", base_left, base_right), Claim("equal", step_left, step_right)
    middle = expanded(step_left)
    steps = (
        Step(1, base, pick(rng, "for n = 1 the sum is its first term", "for n = 1 there is a single term",
                           "checking n = 1 directly")),
        Step(2, Claim("equal", step_left, middle), pick(rng, "adding the next term to the sum for n", "expanding",
                                                         "the induction hypothesis and expanding")),
        Step(3, Claim("equal", middle, step_right), pick(rng, "factoring", "recognising the closed form at n + 1",
                                                         "factoring the polynomial")),
    )
    return Blueprint(problem("induction", template, text, (base, inductive), level), steps)
