"""``equation``: the solution set of a polynomial equation, proved by factoring it into linear factors.

Level 1 draws roots in -6..6 (the original world). Level 2 draws roots in -12..12, larger
leading coefficients, and a constant on both sides of ``quadratic``, ``double_root`` and
``linear``; level 3 adds a third factor (a cubic with three roots, a double root beside a
simple one), negative coefficients and larger constants.
"""

from __future__ import annotations

import random

from data.world.claims import Claim
from data.world.families.text import difference, expanded, nonzero, pick, plus
from data.world.problems import Blueprint, problem
from data.world.steps import Step

TEMPLATES = ("quadratic", "scaled_quadratic", "double_root", "linear")
Shape = tuple[str, tuple[int, ...], int]
"""(the factored polynomial, its roots, the constant added to both sides)."""


def factor(root: int) -> str:
    return f"({plus('x', str(-root))})"


def first_level(rng: random.Random, template: str) -> Shape:
    r1 = nonzero(rng, -6, 6)
    r2 = rng.choice([value for value in range(-6, 7) if value not in (0, r1)])
    if template == "quadratic":
        return f"{factor(r1)}{factor(r2)}", (r1, r2), 0
    if template == "scaled_quadratic":
        k = rng.randint(2, 4)
        return f"{k}{factor(r1)}{factor(r2)}", (r1, r2), 0
    if template == "double_root":
        return f"{factor(r1)}^2", (r1,), 0
    k = rng.randint(2, 5)  # linear
    return f"{k}{factor(r1)}", (r1,), rng.randint(1, 9)


def distinct_roots(rng: random.Random, count: int, reach: int) -> list[int]:
    return rng.sample([value for value in range(-reach, reach + 1) if value != 0], count)


def wider_level(rng: random.Random, template: str, level: int) -> Shape:
    if template == "quadratic":
        roots = distinct_roots(rng, 2 if level == 2 else 3, 12 if level == 2 else 9)
        return "".join(factor(root) for root in roots), tuple(roots), rng.randint(0, 4 if level == 2 else 9)
    if template == "scaled_quadratic":
        r1, r2 = distinct_roots(rng, 2, 12)
        if level == 2:
            return f"{rng.randint(2, 6)}{factor(r1)}{factor(r2)}", (r1, r2), 0
        k = rng.choice([value for value in range(-9, 10) if abs(value) >= 2])
        return f"{k}{factor(r1)}{factor(r2)}", (r1, r2), rng.randint(1, 12)
    if template == "double_root":
        if level == 2:
            r1 = nonzero(rng, -12, 12)
            k = rng.randint(1, 9)
            return f"{'' if k == 1 else k}{factor(r1)}^2", (r1,), rng.randint(0, 4)
        r1, r2 = distinct_roots(rng, 2, 12)
        return f"{factor(r1)}^2{factor(r2)}", (r1, r2), 0
    r1 = nonzero(rng, -12, 12)  # linear
    if level == 2:
        return f"{rng.randint(2, 9)}{factor(r1)}", (r1,), rng.randint(1, 12)
    k = rng.choice([value for value in range(-12, 13) if abs(value) >= 2])
    return f"{k}{factor(r1)}", (r1,), nonzero(rng, -20, 20)


def equation(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    factored, roots, shift = first_level(rng, template) if level == 1 else wider_level(rng, template, level)
    polynomial = expanded(factored)
    left, right = (expanded(f"{polynomial} + {shift}"), str(shift)) if shift else (polynomial, "0")
    named = tuple(str(root) for root in sorted(roots))
    goal = Claim("solutions", left, right, "x", named)
    text = pick(rng, f"Find all real x with {left} = {right}, and prove that there are no others.",
                f"Solve {left} = {right} over the real numbers.", f"Prove that {goal.render(0)}.",
                f"Show that {goal.render(1)}.")
    steps = [Step(1, Claim("equal", difference(left, right) if shift else left, factored),
                  pick(rng, "factoring", "factorising the left-hand side", "splitting into linear factors"))]
    steps.append(Step(2, Claim("solutions", factored, "0", "x", named),
                      pick(rng, "a product is zero exactly when one of its factors is",
                           "a product vanishes only when a factor vanishes", "each factor is zero at one value only")))
    steps.append(Step(3, goal, pick(rng, "", "", "the two previous steps")))
    return Blueprint(problem("equation", template, text, (goal,), level), tuple(steps))
