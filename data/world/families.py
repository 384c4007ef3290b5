"""Problem families of the ground-truth world, each with correct proofs written several ways.

Five statement families, each with a few templates whose coefficients are drawn from a
seeded ``random.Random``:

- ``identity``: a polynomial identity, proved by expanding and collecting.
- ``inequality``: a polynomial inequality, proved by writing the difference as a sum of squares.
- ``divisibility``: an integer polynomial is a multiple of ``k``, proved by factoring into consecutive factors.
- ``equation``: the solution set of an equation, proved by factoring into linear factors.
- ``induction``: a closed form of a finite sum, proved by a base case and the inductive step.

A template fixes the shape of the statement and of its proof; the proof's wording (lead-ins,
connectors, reasons, the form of each claim, an opening sentence) is drawn per proof, so no
two proofs of a template need read alike. A template's correct proof is checked by
``data.world.checker`` where it is built: a proof is only ever *claimed* correct when the
checker says so (see ``data.world.proofs``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

import sympy

from data.records import stable_id
from data.world.config import FAMILIES
from data.world.claims import Claim
from data.world.expressions import parse, render, top_level_terms
from data.world.steps import Step



@dataclass(frozen=True)
class Problem:
    id: str
    family: str
    template: str
    statement: str
    goal: tuple[Claim, ...]
    """What a proof must establish (the induction family: the base case and the inductive step)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}")
        if not self.goal:
            raise ValueError("a problem needs a goal")


@dataclass(frozen=True)
class Blueprint:
    """A problem with the steps of one correct proof (reasons as the template words them)."""

    problem: Problem
    steps: tuple[Step, ...]


def nonzero(rng: random.Random, low: int, high: int) -> int:
    return rng.choice([value for value in range(low, high + 1) if value != 0])


def times(coefficient: int, variable: str) -> str:
    """``3a``, ``a``, ``-a``, ``-3a``: a coefficient written before its variable."""
    if coefficient == 1:
        return variable
    if coefficient == -1:
        return f"-{variable}"
    return f"{coefficient}{variable}"


def plus(first: str, second: str) -> str:
    """``first + second`` written with the sign of ``second`` (``x + -3`` is ``x - 3``)."""
    return f"{first} - {second[1:]}" if second.startswith("-") else f"{first} + {second}"


def difference(left: str, right: str) -> str:
    """``left - right``, bracketing ``right`` when it is a sum."""
    return f"{left} - ({right})" if len(sympy.Add.make_args(parse(right))) > 1 else f"{left} - {right}"


def substitute(text: str, variable: str, value: str) -> str:
    """``text`` with ``variable`` replaced by ``value`` as a person writes it: ``2n`` at 1 is ``2·1``, at ``(n + 1)`` is ``2(n + 1)``."""
    if value.lstrip("-").isdigit():
        text = re.sub(rf"(?<=[0-9)]){variable}", f"·{value}", text)
    return text.replace(variable, value)


def bracketed(text: str) -> str:
    return f"({text})" if len(top_level_terms(text)) > 1 else text


def expanded(text: str) -> str:
    return render(sympy.expand(parse(text)))


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def statement(rng: random.Random, claim_text: str, variables: str, kind: str) -> str:
    """The problem in one of the ways it is asked, e.g. ``Let a and b be real numbers. Prove that ...``."""
    several = " and " in variables
    plural = {"real": "real numbers", "integer": "integers"}[kind]
    single = {"real": "real number", "integer": "integer"}[kind]
    return pick(rng, f"Prove that {claim_text} for all {plural} {variables}.",
                f"Show that {claim_text} for every {single} {variables}." if not several
                else f"Show that {claim_text} for any {plural} {variables}.",
                f"Let {variables} be {plural if several else ('an ' if single[0] in 'aeiou' else 'a ') + single}. Prove that {claim_text}.",
                f"Prove: for all {plural} {variables}, {claim_text}.")


def problem(family: str, template: str, text: str, goal: tuple[Claim, ...]) -> Problem:
    return Problem(stable_id(family, template, text), family, template, text, goal)


def identity(rng: random.Random, template: str) -> Blueprint:
    p, q = nonzero(rng, 1, 5), nonzero(rng, 1, 5)
    if template == "square_difference":
        pieces = [("", f"({plus(times(p, 'a'), times(q, 'b'))})^2"), ("-", f"({plus(times(p, 'a'), times(-q, 'b'))})^2")]
    elif template == "square_sum":
        pieces = [("", f"({plus(times(p, 'a'), times(q, 'b'))})^2"), ("+", f"({plus(times(p, 'a'), times(-q, 'b'))})^2")]
    elif template == "binomial_product":
        q = nonzero(rng, -6, 6)
        pieces = [("", f"(x + {p})({plus('x', str(q))})")]
    elif template == "cube_difference":
        pieces = [("", f"(x + {p})^3"), ("-", f"(x - {p})^3")]
    else:  # conjugates
        pieces = [("", f"({times(p, 'x')} + {q})({times(p, 'x')} - {q})"), ("+", f"{q * q}")]
    left = " ".join(piece if not sign else f"{sign} {piece}" for sign, piece in pieces)
    right = expanded(left)
    goal = Claim("equal", left, right)
    text = statement(rng, f"{left} = {right}", "a and b" if "a" in left else "x", "real")
    partial_pieces = []
    for sign, piece in pieces:
        opened = expanded(piece)
        if sign:
            opened = f"({opened})" if sign == "-" and len(sympy.Add.make_args(parse(opened))) > 1 else opened
            partial_pieces.append(f"{sign} {opened}")
        else:
            partial_pieces.append(opened)
    partial = " ".join(partial_pieces)
    expand_reason = pick(rng, "expanding each product", "expanding the brackets", "multiplying out",
                         "the binomial formula", "distributing every product")
    steps = [Step(1, Claim("equal", left, partial), expand_reason)]
    if parse(partial) != parse(right) or partial != right:
        steps.append(Step(2, Claim("equal", partial, right), pick(rng, "collecting like terms", "", "combining terms",
                                                                       "cancelling opposite terms")))
    return Blueprint(problem("identity", template, text, (goal,)), tuple(steps))


def inequality(rng: random.Random, template: str) -> Blueprint:
    if template == "two_squares":
        p, q = nonzero(rng, 1, 4), nonzero(rng, 1, 4)
        left, right = plus(times(p * p, "a^2"), times(q * q, "b^2")), times(2 * p * q, "ab")
        square = f"({plus(times(p, 'a'), times(-q, 'b'))})^2"
    elif template == "shifted_square":
        c, d = nonzero(rng, 1, 6), rng.randint(0, 5)
        left, right = f"x^2 + {c * c + d}", times(2 * c, "x")
        square = f"(x - {c})^2" + (f" + {d}" if d else "")
    elif template == "three_squares":
        left, right = "2a^2 + 2b^2 + 2c^2", "2ab + 2bc + 2ca"
        square = "(a - b)^2 + (b - c)^2 + (c - a)^2"
    else:  # square_of_sum
        c = nonzero(rng, 1, 6)
        left, right = f"(x + {c})^2", times(4 * c, "x")
        square = f"(x - {c})^2"
    goal = Claim("at_least", left, right)
    text = statement(rng, goal.render(rng.randrange(2)), "x" if "x" in left else ("a, b and c" if "c" in left else "a and b"),
                     "real")
    gap = difference(left, right)
    steps = (
        Step(1, Claim("equal", gap, square), pick(rng, "completing the square", "expanding the square on the right",
                                                  "rewriting the difference as a square", "factoring the difference")),
        Step(2, Claim("at_least", square, "0"), pick(rng, "a square is never negative", "squares of real numbers are nonnegative",
                                                     "every square is at least 0", "a sum of squares is nonnegative")),
        Step(3, goal, pick(rng, "", "", "steps 1 and 2", "adding the right-hand side to both sides")),
    )
    return Blueprint(problem("inequality", template, text, (goal,)), steps)


def divisibility(rng: random.Random, template: str) -> Blueprint:
    c = rng.randint(1, 5)
    if template == "consecutive_pair":
        k = rng.randint(1, 6)
        factored, modulus = ("n(n + 1)" if k == 1 else f"{k}n(n + 1)"), 2 * k
        left = expanded(factored)
    elif template == "shifted_pair":
        factored, modulus = f"(n + {c})(n + {c + 1})", 2
        left = expanded(factored)
    elif template == "consecutive_triple":
        shift = rng.randint(0, 3)
        factored = "(n - 1)n(n + 1)" if shift == 0 else f"({plus('n', str(shift - 1))})(n + {shift})(n + {shift + 1})"
        factored = factored.replace("(n + 0)", "n")
        modulus, left = int(pick(rng, "6", "3", "2")), expanded(factored)
    elif template == "consecutive_four":
        factored, modulus = f"(n + {c})(n + {c + 1})(n + {c + 2})(n + {c + 3})", 24
        left = expanded(factored)
    else:  # odd_square
        shift = rng.randint(0, 4)
        left, modulus = f"(2n + {2 * shift + 1})^2 - 1", 8
        factored = "4n(n + 1)" if shift == 0 else f"4(n + {shift})(n + {shift + 1})"
    goal = Claim("divisible", left, str(modulus))
    text = statement(rng, goal.render(rng.randrange(4)), "n", "integer")
    reason = pick(rng, "one of any two consecutive integers is even" if modulus <= 2 or template == "odd_square"
                  else f"a product of consecutive integers is divisible by {modulus}",
                  "it is a product of consecutive integers", "consecutive integers include a multiple of every smaller count")
    steps = []
    if template == "odd_square":
        middle = expanded(left)
        steps.append(Step(1, Claim("equal", left, middle), pick(rng, "expanding the square", "multiplying out")))
        steps.append(Step(2, Claim("equal", middle, factored), pick(rng, "factoring out 4", "taking out the common factor 4",
                                                                     "factoring")))
    else:
        steps.append(Step(1, Claim("equal", left, factored), pick(rng, "factoring", "factoring the polynomial", "factorising")))
    steps.append(Step(len(steps) + 1, Claim("divisible", factored, str(modulus)), reason))
    steps.append(Step(len(steps) + 1, goal, pick(rng, "", "", "the previous steps")))
    return Blueprint(problem("divisibility", template, text, (goal,)), tuple(steps))


def equation(rng: random.Random, template: str) -> Blueprint:
    r1 = nonzero(rng, -6, 6)
    r2 = rng.choice([value for value in range(-6, 7) if value not in (0, r1)])
    if template == "quadratic":
        factored, roots = f"({plus('x', str(-r1))})({plus('x', str(-r2))})", (r1, r2)
    elif template == "scaled_quadratic":
        k = rng.randint(2, 4)
        factored, roots = f"{k}({plus('x', str(-r1))})({plus('x', str(-r2))})", (r1, r2)
    elif template == "double_root":
        factored, roots = f"({plus('x', str(-r1))})^2", (r1,)
    else:  # linear
        k = rng.randint(2, 5)
        factored, roots = f"{k}({plus('x', str(-r1))})", (r1,)
    polynomial = expanded(factored)
    shift = rng.randint(1, 9) if template == "linear" else 0
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
    return Blueprint(problem("equation", template, text, (goal,)), tuple(steps))


INDUCTION_SUMS: dict[str, tuple[str, str]] = {
    # template: (term f(i), closed form F(n)) with F(n) - F(n - 1) = f(n) and F(0) = 0
    "odd_numbers": ("2i - 1", "n^2"),
    "even_numbers": ("2i", "n(n + 1)"),
    "hex_numbers": ("3i^2 - 3i + 1", "n^3"),
    "cubes": ("4i^3", "n^2(n + 1)^2"),
    "arithmetic": ("", ""),
}


def induction(rng: random.Random, template: str) -> Blueprint:
    term, closed = INDUCTION_SUMS[template]
    i, n = sympy.Symbol("i"), sympy.Symbol("n")
    if template == "arithmetic":
        c, d = rng.randint(1, 4), rng.randint(-3, 3)
        term = plus(times(2 * c, "i"), str(d)) if d else times(2 * c, "i")
        closed = render(sympy.factor(c * n * (n + 1) + d * n))
    else:  # the same sum scaled: c times each term, c times the closed form
        scale = rng.randint(1, 5)
        if scale > 1:
            term, closed = expanded(f"{scale}({term})"), render(sympy.factor(scale * parse(closed)))
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
    return Blueprint(problem("induction", template, text, (base, inductive)), steps)


BUILDERS: dict[str, tuple[Callable[[random.Random, str], Blueprint], tuple[str, ...]]] = {
    "identity": (identity, ("square_difference", "square_sum", "binomial_product", "cube_difference", "conjugates")),
    "inequality": (inequality, ("two_squares", "shifted_square", "three_squares", "square_of_sum")),
    "divisibility": (divisibility, ("consecutive_pair", "shifted_pair", "consecutive_triple", "consecutive_four", "odd_square")),
    "equation": (equation, ("quadratic", "scaled_quadratic", "double_root", "linear")),
    "induction": (induction, tuple(INDUCTION_SUMS)),
}


def templates(family: str) -> tuple[str, ...]:
    return BUILDERS[family][1]


def blueprint(family: str, template: str, rng: random.Random) -> Blueprint:
    """A problem of ``family``/``template`` with coefficients from ``rng``, and one correct proof of it."""
    builder, known = BUILDERS[family]
    if template not in known:
        raise ValueError(f"family {family!r} has no template {template!r}; it has {', '.join(known)}")
    return builder(rng, template)
