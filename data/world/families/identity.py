"""``identity``: a polynomial identity, proved by expanding each product and collecting like terms.

Level 1 draws coefficients up to 5 (the original world). Level 2 widens them to 9 (12 for
shifts), with signs, lets the two squares differ in their second term and both binomials
carry a coefficient; level 3 uses three-term brackets, three-factor products (proved in one
more step: the first two factors first) and three variables.
"""

from __future__ import annotations

import random

import sympy

from data.world.claims import Claim
from data.world.expressions import parse
from data.world.families.text import expanded, joined, nonzero, pick, plus, statement, times
from data.world.problems import Blueprint, problem
from data.world.steps import Step

TEMPLATES = ("square_difference", "square_sum", "binomial_product", "cube_difference", "conjugates")
Pieces = list[tuple[str, str]]
"""The left side as signed pieces: ``[("", "(a + b)^2"), ("-", "(a - b)^2")]``."""


def first_level(rng: random.Random, template: str) -> Pieces:
    p, q = nonzero(rng, 1, 5), nonzero(rng, 1, 5)
    if template == "square_difference":
        return [("", f"({plus(times(p, 'a'), times(q, 'b'))})^2"), ("-", f"({plus(times(p, 'a'), times(-q, 'b'))})^2")]
    if template == "square_sum":
        return [("", f"({plus(times(p, 'a'), times(q, 'b'))})^2"), ("+", f"({plus(times(p, 'a'), times(-q, 'b'))})^2")]
    if template == "binomial_product":
        q = nonzero(rng, -6, 6)
        return [("", f"(x + {p})({plus('x', str(q))})")]
    if template == "cube_difference":
        return [("", f"(x + {p})^3"), ("-", f"(x - {p})^3")]
    return [("", f"({times(p, 'x')} + {q})({times(p, 'x')} - {q})"), ("+", f"{q * q}")]  # conjugates


def wider_level(rng: random.Random, template: str, level: int) -> Pieces:
    if template in ("square_difference", "square_sum"):
        sign = "-" if template == "square_difference" else "+"
        if level == 2:
            p, q = rng.randint(1, 9), nonzero(rng, -9, 9)
            s = rng.choice([value for value in range(-9, 10) if value not in (0, q)])
            first, second = joined(times(p, "a"), times(q, "b")), joined(times(p, "a"), times(s, "b"))
        else:
            p, q, r = rng.randint(1, 9), nonzero(rng, -9, 9), nonzero(rng, -9, 9)
            first = joined(times(p, "a"), times(q, "b"), times(r, "c"))
            second = joined(times(p, "a"), times(-q, "b"), times(-r, "c"))
        return [("", f"({first})^2"), (sign, f"({second})^2")]
    if template == "binomial_product":
        if level == 2:
            m, p, n, q = rng.randint(1, 4), nonzero(rng, -9, 9), rng.randint(1, 4), nonzero(rng, -9, 9)
            return [("", f"({plus(times(m, 'x'), str(p))})({plus(times(n, 'x'), str(q))})")]
        offsets = [nonzero(rng, -9, 9) for _ in range(3)]
        return [("", "".join(f"({plus('x', str(offset))})" for offset in offsets))]
    if template == "cube_difference":
        m, top = (1, 12) if level == 2 else (rng.randint(2, 5), 9)
        p = nonzero(rng, -top, top)
        q = rng.choice([value for value in range(-top, top + 1) if value not in (0, p)])
        return [("", f"({plus(times(m, 'x'), str(p))})^3"), ("-", f"({plus(times(m, 'x'), str(q))})^3")]
    if level == 2:  # conjugates
        p, q, r = rng.randint(1, 9), rng.randint(1, 12), rng.randint(0, 12)
        pieces = [("", f"({times(p, 'x')} + {q})({times(p, 'x')} - {q})")]
        return pieces + ([("+", str(r))] if r else [])
    p, q, r = rng.randint(1, 9), rng.randint(1, 9), rng.randint(1, 12)
    return [("", f"({times(p, 'a')} + {times(q, 'b')})({times(p, 'a')} - {times(q, 'b')})"), ("+", times(r, "b^2"))]


def opened(sign: str, piece: str) -> str:
    """The piece expanded, as it stands after ``sign`` in the expanded left side."""
    text = expanded(piece)
    if not sign:
        return text
    return f"{sign} ({text})" if sign == "-" and len(sympy.Add.make_args(parse(text))) > 1 else f"{sign} {text}"


def identity(rng: random.Random, template: str, level: int = 1) -> Blueprint:
    pieces = first_level(rng, template) if level == 1 else wider_level(rng, template, level)
    left = " ".join(piece if not sign else f"{sign} {piece}" for sign, piece in pieces)
    right = expanded(left)
    goal = Claim("equal", left, right)
    variables = "a, b and c" if "c" in left else "a and b" if "a" in left else "x"
    text = statement(rng, f"{left} = {right}", variables, "real")
    steps: list[Step] = []
    start = left
    three_factors = len(pieces) == 1 and pieces[0][1].count("(") == 3
    if three_factors:  # (x + p)(x + q)(x + r): the first two factors first
        split = pieces[0][1].index(")(", pieces[0][1].index(")(") + 1) + 1
        first_two = f"({expanded(pieces[0][1][:split])}){pieces[0][1][split:]}"
        steps.append(Step(1, Claim("equal", left, first_two), pick(rng, "multiplying the first two factors",
                                                                    "expanding the first product")))
        pieces, start = [("", first_two)], first_two
    partial = " ".join(opened(sign, piece) for sign, piece in pieces)
    expand_reason = pick(rng, "expanding each product", "expanding the brackets", "multiplying out",
                         "the binomial formula", "distributing every product")
    steps.append(Step(len(steps) + 1, Claim("equal", start, partial), expand_reason))
    if parse(partial) != parse(right) or partial != right:
        steps.append(Step(len(steps) + 1, Claim("equal", partial, right), pick(rng, "collecting like terms", "",
                                                                               "combining terms", "cancelling opposite terms")))
    return Blueprint(problem("identity", template, text, (goal,), level), tuple(steps))
