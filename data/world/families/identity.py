"""``identity``: a polynomial identity, proved by expanding each product and collecting like terms.

Level 1 draws coefficients up to 5 (the original world). Level 2 widens them to 9 (12 for
shifts), with signs, lets the two squares differ in their second term and both binomials
carry a coefficient; level 3 uses three-term brackets, three-factor products (proved in one
more step: the first two factors first) and three variables.

With ``fine`` steps (``WorldConfig.fine_steps``) the proof takes one product at a time and
writes it by its formula before its value: ``(4a - 7b)^2`` becomes ``(4a)^2 + 2(4a)(-7b) +
(-7b)^2`` in one step and ``16a^2 - 56ab + 49b^2`` in the next, so that no step multiplies more
than pairs of single terms (the coarse proof squares both binomials of a difference at once).
"""

from __future__ import annotations

import random
import re
from itertools import combinations

import sympy

from data.world.claims import Claim
from data.world.expressions import parse, top_level_terms
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


BRACKET = re.compile(r"\(([^()]*)\)(?:\^(\d))?")


def signed_terms(bracket: str) -> list[str]:
    """``4a - 7b + c`` → ``['4a', '-7b', 'c']``."""
    return [term.replace(" ", "").removeprefix("+") for term in top_level_terms(bracket)]


def by_formula(piece: str) -> str | None:
    """``piece`` written by its formula, every product of single terms left to evaluate: a square or cube of a sum by
    the binomial formula, a product of two sums by the distributive law; None for anything else (a term, a constant,
    three factors)."""
    brackets = BRACKET.findall(piece)
    if "".join(f"({inner})" + (f"^{power}" if power else "") for inner, power in brackets) != piece:
        return None
    if len(brackets) == 1 and brackets[0][1] in ("2", "3"):
        terms, power = signed_terms(brackets[0][0]), int(brackets[0][1])
        if power == 2 and len(terms) == 2:
            return f"({terms[0]})^2 + 2({terms[0]})({terms[1]}) + ({terms[1]})^2"
        if power == 2:
            return " + ".join([f"({term})^2" for term in terms]
                              + [f"2({first})({second})" for first, second in combinations(terms, 2)])
        if len(terms) == 2:
            first, second = terms
            return f"({first})^3 + 3({first})^2({second}) + 3({first})({second})^2 + ({second})^3"
        return None
    if len(brackets) == 2 and not brackets[0][1] and not brackets[1][1]:
        return " + ".join(f"({first})({second})" for first in signed_terms(brackets[0][0])
                          for second in signed_terms(brackets[1][0]))
    return None


def written(pieces: Pieces) -> str:
    return " ".join(piece if not sign else f"{sign} {piece}" for sign, piece in pieces)


def fine_steps(rng: random.Random, pieces: Pieces, start: str, first_number: int) -> tuple[list[Step], str]:
    """Steps from ``start`` (the pieces written out) that take one piece at a time: its formula, then its value; and
    the expression they end on."""
    steps: list[Step] = []
    current, pieces = start, list(pieces)
    for index, (sign, piece) in enumerate(pieces):
        formula = by_formula(piece)
        if formula is None:
            continue
        pieces[index] = (sign, f"({formula})" if sign == "-" else formula)
        by_rule = written(pieces)
        steps.append(Step(first_number + len(steps), Claim("equal", current, by_rule),
                          pick(rng, "the binomial formula", "multiplying term by term", "the distributive law")))
        value = opened(sign, piece)
        pieces[index] = (sign, value.removeprefix(f"{sign} ") if sign else value)
        current = written(pieces)
        steps.append(Step(first_number + len(steps), Claim("equal", by_rule, current),
                          pick(rng, "evaluating each product", "multiplying out", "working out the products")))
    return steps, current


def identity(rng: random.Random, template: str, level: int = 1, fine: bool = False) -> Blueprint:
    pieces = first_level(rng, template) if level == 1 else wider_level(rng, template, level)
    left = written(pieces)
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
    if fine:
        taken, partial = fine_steps(rng, pieces, start, len(steps) + 1)
        steps += taken
    else:
        partial = " ".join(opened(sign, piece) for sign, piece in pieces)
        expand_reason = pick(rng, "expanding each product", "expanding the brackets", "multiplying out",
                             "the binomial formula", "distributing every product")
        steps.append(Step(len(steps) + 1, Claim("equal", start, partial), expand_reason))
    if parse(partial) != parse(right) or partial != right:
        steps.append(Step(len(steps) + 1, Claim("equal", partial, right), pick(rng, "collecting like terms", "",
                                                                               "combining terms", "cancelling opposite terms")))
    return Blueprint(problem("identity", template, text, (goal,), level), tuple(steps))
