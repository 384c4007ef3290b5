"""``inequality``: a polynomial inequality, proved by writing the difference of its sides as a sum of squares.

Level 1 draws coefficients up to 4 or 6 (the original world). Level 2 widens them to 9 or 12,
with signs (``9a^2 + 4b^2 ≥ -12ab``), scales ``three_squares`` and puts a coefficient before
the variable, and adds a small constant to ``two_squares``; level 3 adds larger constants
and a second variable. Every inequality
stays of degree 2, the degree the checker decides.
"""

from __future__ import annotations

import random

from data.world.claims import Claim
from data.world.families.text import difference, joined, nonzero, pick, plus, statement, times
from data.world.problems import Blueprint, problem
from data.world.steps import Step

TEMPLATES = ("two_squares", "shifted_square", "three_squares", "square_of_sum")
Shape = tuple[str, str, str]
"""(left, right, the difference of the two as a sum of squares)."""


def first_level(rng: random.Random, template: str) -> Shape:
    if template == "two_squares":
        p, q = nonzero(rng, 1, 4), nonzero(rng, 1, 4)
        return plus(times(p * p, "a^2"), times(q * q, "b^2")), times(2 * p * q, "ab"), f"({plus(times(p, 'a'), times(-q, 'b'))})^2"
    if template == "shifted_square":
        c, d = nonzero(rng, 1, 6), rng.randint(0, 5)
        return f"x^2 + {c * c + d}", times(2 * c, "x"), f"(x - {c})^2" + (f" + {d}" if d else "")
    if template == "three_squares":
        return "2a^2 + 2b^2 + 2c^2", "2ab + 2bc + 2ca", "(a - b)^2 + (b - c)^2 + (c - a)^2"
    c = nonzero(rng, 1, 6)  # square_of_sum
    return f"(x + {c})^2", times(4 * c, "x"), f"(x - {c})^2"


def wider_level(rng: random.Random, template: str, level: int) -> Shape:
    if template == "two_squares":
        p, q, d = rng.randint(1, 12), nonzero(rng, -12, 12), rng.randint(0, 4) if level == 2 else rng.randint(1, 20)
        shift = f" + {d}" if d else ""
        left = plus(times(p * p, "a^2"), times(q * q, "b^2")) + shift
        return left, times(2 * p * q, "ab"), f"({plus(times(p, 'a'), times(-q, 'b'))})^2" + shift
    if template == "shifted_square":
        m, c, d = (1 if level == 2 else rng.randint(2, 6)), nonzero(rng, -15, 15), rng.randint(0, 15)
        left = f"{times(m * m, 'x^2')} + {c * c + d}"
        return left, times(2 * m * c, "x"), f"({plus(times(m, 'x'), str(-c))})^2" + (f" + {d}" if d else "")
    if template == "three_squares":
        top = 8 if level == 2 else 12
        p, q, r = (rng.randint(1, top) for _ in range(3))
        left = joined(times(2 * p * p, "a^2"), times(2 * q * q, "b^2"), times(2 * r * r, "c^2"))
        right = joined(times(2 * p * q, "ab"), times(2 * q * r, "bc"), times(2 * r * p, "ca"))
        square = " + ".join(f"({plus(times(first, one), times(-second, other))})^2"
                            for first, one, second, other in ((p, "a", q, "b"), (q, "b", r, "c"), (r, "c", p, "a")))
        return left, right, square
    m, c = rng.randint(1, 6 if level == 2 else 9), nonzero(rng, -12, 12)  # square_of_sum
    second, product = ("", "x") if level == 2 else ("b", "ab")
    shifted = times(c, second) if second else str(c)
    opposite = times(-c, second) if second else str(-c)
    first = times(m, "x" if level == 2 else "a")
    return f"({plus(first, shifted)})^2", times(4 * m * c, product), f"({plus(first, opposite)})^2"


def inequality(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    left, right, square = first_level(rng, template) if level == 1 else wider_level(rng, template, level)
    goal = Claim("at_least", left, right)
    variables = "x" if "x" in left else ("a, b and c" if "c" in left else "a and b")
    text = statement(rng, goal.render(rng.randrange(2)), variables, "real")
    gap = difference(left, right)
    steps = (
        Step(1, Claim("equal", gap, square), pick(rng, "completing the square", "expanding the square on the right",
                                                  "rewriting the difference as a square", "factoring the difference")),
        Step(2, Claim("at_least", square, "0"), pick(rng, "a square is never negative", "squares of real numbers are nonnegative",
                                                     "every square is at least 0", "a sum of squares is nonnegative")),
        Step(3, goal, pick(rng, "", "", "steps 1 and 2", "adding the right-hand side to both sides")),
    )
    return Blueprint(problem("inequality", template, text, (goal,), level), steps)
