"""The statements a step of this world can make, how they are written, and whether they are true.

Four kinds, each written in plain text and decided exactly by sympy, for every value of
the variables (reals; integers for divisibility):

- ``equal``: ``L = R``; true when ``L - R`` expands to 0.
- ``at_least``: ``L ≥ R`` (or ``>=``); true when ``L - R`` is nonnegative everywhere.
  Decided for polynomials of degree at most 2 (the quadratic form's matrix is positive
  semidefinite); higher degrees are undecidable here.
- ``divisible``: ``L is divisible by k``, ``k divides L``, ``L is a multiple of k``,
  ``L is even``; true when ``L`` is a multiple of ``k`` for every integer value of its
  variables (decided over all residues mod ``k``: an integer polynomial's value mod ``k``
  depends only on its variables' residues).
- ``solutions``: ``L = R exactly when x = 2 or x = 3``, ``the solutions of L = R are x = 2
  and x = 3``; true when the real solutions of the equation are exactly the ones named.

A text that is none of these is a :class:`ClaimError`; a claim whose truth cannot be
decided raises :class:`Undecidable`. Both count as a bad step for the checker.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import sympy

from data.world.expressions import ExpressionError, equal, expansion, parse

ClaimKind = Literal["equal", "at_least", "divisible", "solutions"]
KINDS: tuple[ClaimKind, ...] = ("equal", "at_least", "divisible", "solutions")
MAX_RESIDUE_CASES = 20_000


class ClaimError(ValueError):
    """Text that states no claim of this world."""


class Undecidable(ValueError):
    """A claim of this world whose truth the checker cannot decide (reported as such, never guessed)."""


@dataclass(frozen=True)
class Claim:
    kind: ClaimKind
    left: str
    """The subject: ``L`` of every kind."""
    right: str = "0"
    """``R`` of ``equal``, ``at_least`` and the equation of ``solutions``; the divisor of ``divisible``."""
    variable: str = ""
    """``solutions``: the unknown."""
    roots: tuple[str, ...] = ()
    """``solutions``: the values named, as written."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown claim kind {self.kind!r}")
        if self.kind == "solutions" and (len(self.variable) != 1 or not self.roots):
            raise ValueError("a solutions claim names its unknown and at least one value")

    def subject(self) -> sympy.Expr:
        """What the claim is about, for linking steps: ``L``, ``L - R`` for an inequality or an equation."""
        if self.kind in ("at_least", "solutions"):
            return parse(self.left) - parse(self.right)
        return parse(self.left)

    def is_true(self) -> bool:
        """Decide the claim; ``Undecidable`` when this world cannot, ``ExpressionError`` for a malformed side.

        Decisions are remembered per claim (a world checks the same steps in every flawed proof of a problem)."""
        return decided(self)

    def decide(self) -> bool:
        """:meth:`is_true` without the memory."""
        if self.kind == "equal":
            return equal(parse(self.left), parse(self.right))
        if self.kind == "at_least":
            return nonnegative(parse(self.left) - parse(self.right))
        if self.kind == "divisible":
            return divisible_everywhere(parse(self.left), divisor(self.right))
        return solution_set(parse(self.left) - parse(self.right), self.variable) == {parse(root) for root in self.roots}

    def render(self, style: int = 0) -> str:
        """The claim in words; ``style`` picks among the ways people write it."""
        if self.kind == "equal":
            return f"{self.left} = {self.right}"
        if self.kind == "at_least":
            return f"{self.left} ≥ {self.right}" if style % 2 == 0 else f"{self.left} >= {self.right}"
        if self.kind == "divisible":
            forms = (f"{self.left} is divisible by {self.right}", f"{self.right} divides {self.left}",
                     f"{self.left} is a multiple of {self.right}")
            if self.right == "2":
                forms += (f"{self.left} is even",)
            return forms[style % len(forms)]
        named = [f"{self.variable} = {root}" for root in self.roots]
        if style % 2 == 0:
            return f"{self.left} = {self.right} exactly when {' or '.join(named)}"
        return f"the solutions of {self.left} = {self.right} are {' and '.join(named)}"


@functools.lru_cache(maxsize=65536)
def decided(claim: Claim) -> bool:
    return claim.decide()


def divisor(text: str) -> int:
    if not re.fullmatch(r"\s*\d+\s*", text) or int(text) < 1:
        raise ClaimError(f"a divisor must be a positive whole number, not {text!r}")
    return int(text)


def nonnegative(expression: sympy.Expr) -> bool:
    """Whether a polynomial of degree <= 2 is >= 0 for all real values (its augmented matrix is PSD)."""
    variables = sorted(expression.free_symbols, key=str)
    polynomial = sympy.Poly(expansion(expression), *variables) if variables else None
    if polynomial is None:
        return bool(expansion(expression) >= 0)
    if polynomial.total_degree() > 2:
        raise Undecidable(f"nonnegativity of a degree-{polynomial.total_degree()} polynomial")
    if not all(coefficient.is_Rational for coefficient in polynomial.coeffs()):
        raise Undecidable("nonnegativity of a polynomial with irrational coefficients")
    size = len(variables) + 1
    matrix = [[Fraction(0)] * size for _ in range(size)]
    for monomial, coefficient in polynomial.terms():
        value = Fraction(int(coefficient.p), int(coefficient.q))
        powered = [index for index, power in enumerate(monomial) for _ in range(power)]
        if len(powered) == 2:
            first, second = powered
            if first == second:
                matrix[first][first] += value
            else:
                matrix[first][second] += value / 2
                matrix[second][first] += value / 2
        elif len(powered) == 1:
            matrix[powered[0]][size - 1] += value / 2
            matrix[size - 1][powered[0]] += value / 2
        else:
            matrix[size - 1][size - 1] += value
    return all(determinant([[matrix[row][column] for column in rows] for row in rows]) >= 0
               for count in range(1, size + 1) for rows in itertools.combinations(range(size), count))


def determinant(matrix: list[list[Fraction]]) -> Fraction:
    """The exact determinant of a square matrix of rationals, by elimination (sympy's is a hundred times slower)."""
    rows = [list(row) for row in matrix]
    result = Fraction(1)
    for column in range(len(rows)):
        pivot = next((row for row in range(column, len(rows)) if rows[row][column]), None)
        if pivot is None:
            return Fraction(0)
        if pivot != column:
            rows[column], rows[pivot] = rows[pivot], rows[column]
            result = -result
        result *= rows[column][column]
        for row in range(column + 1, len(rows)):
            factor = rows[row][column] / rows[column][column]
            if factor:
                rows[row] = [value - factor * pivot_value for value, pivot_value in zip(rows[row], rows[column])]
    return result


def divisible_everywhere(expression: sympy.Expr, modulus: int) -> bool:
    """Whether an integer polynomial takes only multiples of ``modulus`` at integer points."""
    expanded = expansion(expression)
    variables = sorted(expanded.free_symbols, key=str)
    coefficients = sympy.Poly(expanded, *variables).coeffs() if variables else [expanded]
    if not all(coefficient.is_integer for coefficient in coefficients):
        raise Undecidable("divisibility of a polynomial with fractional coefficients")
    if modulus ** len(variables) > MAX_RESIDUE_CASES:
        raise Undecidable(f"{modulus}^{len(variables)} residue cases")
    if not variables:
        return int(expanded) % modulus == 0
    terms = [(powers, int(coefficient)) for powers, coefficient in sympy.Poly(expanded, *variables).terms()]
    for values in itertools.product(range(modulus), repeat=len(variables)):  # in Python integers: exact, and fast
        if sum(coefficient * math.prod(value ** power for value, power in zip(values, powers))
               for powers, coefficient in terms) % modulus:
            return False
    return True


def solution_set(expression: sympy.Expr, variable: str) -> set[sympy.Expr]:
    """The real solutions of ``expression = 0`` in one unknown."""
    unknown = sympy.Symbol(variable)
    if expression.free_symbols - {unknown}:
        raise Undecidable("an equation in more than one unknown")
    expanded = expansion(expression)
    if expanded == 0:
        raise Undecidable("an equation that holds for every value")
    rational = rational_roots(expanded, unknown)
    if rational is not None:
        return rational
    return {root for root in sympy.solve(expanded, unknown) if root.is_real}


def rational_roots(expression: sympy.Expr, unknown: sympy.Symbol) -> set[sympy.Expr] | None:
    """The real roots of a polynomial with rational coefficients when all of them are rational (found by factoring, much
    faster than ``sympy.solve``); None when some real root is irrational or ``expression`` is no such polynomial."""
    try:
        polynomial = sympy.Poly(expression, unknown)
    except sympy.PolynomialError:
        return None
    if not polynomial.domain.is_QQ and not polynomial.domain.is_ZZ:
        return None
    roots = set()
    for factor, _ in polynomial.factor_list()[1]:
        if factor.degree() == 1:
            a, b = factor.all_coeffs()
            roots.add(-b / a)
        elif factor.count_roots() > 0:
            return None
    return roots


_AT_LEAST = re.compile(r"^(?P<left>.+?)\s*(?:≥|>=|\\geq)\s*(?P<right>.+)$")
_DIVISIBLE = re.compile(r"^(?P<left>.+?)\s+is\s+(?:divisible\s+by|a\s+multiple\s+of)\s+(?P<right>\d+)$")
_DIVIDES = re.compile(r"^(?P<right>\d+)\s+divides\s+(?P<left>.+)$")
_EVEN = re.compile(r"^(?P<left>.+?)\s+is\s+even$")
_EXACTLY = re.compile(r"^(?P<left>[^=]+?)\s*=\s*(?P<right>[^=]+?)\s+(?:exactly\s+when|if\s+and\s+only\s+if|iff|only\s+for)\s+(?P<named>.+)$")
_SOLUTIONS = re.compile(r"^the\s+(?:solutions|roots)\s+of\s+(?P<left>[^=]+?)\s*=\s*(?P<right>[^=]+?)\s+are\s+(?:exactly\s+)?(?P<named>.+)$")
_NAMED = re.compile(r"^([a-z])\s*=\s*(.+)$")


def parse_claim(text: str) -> Claim:
    """The claim ``text`` states (see the module docstring for the forms); ``ClaimError`` if none."""
    sentence = " ".join(text.strip().rstrip(".").split())
    try:
        for pattern in (_EXACTLY, _SOLUTIONS):
            match = pattern.match(sentence)
            if match:
                variable, roots = named_values(match["named"])
                claim = Claim("solutions", match["left"], match["right"], variable, roots)
                claim.subject()
                return claim
        for pattern, kind in ((_DIVISIBLE, "divisible"), (_DIVIDES, "divisible"), (_AT_LEAST, "at_least")):
            match = pattern.match(sentence)
            if match:
                claim = Claim(kind, match["left"], match["right"])
                parse(claim.left)
                if kind == "at_least":
                    parse(claim.right)
                return claim
        match = _EVEN.match(sentence)
        if match:
            parse(match["left"])
            return Claim("divisible", match["left"], "2")
        if sentence.count("=") == 1:
            left, right = (side.strip() for side in sentence.split("="))
            parse(left), parse(right)
            return Claim("equal", left, right)
    except ExpressionError as error:
        raise ClaimError(str(error)) from None
    raise ClaimError(f"no claim of this world in {text!r}")


def named_values(text: str) -> tuple[str, tuple[str, ...]]:
    """``x = 2 or x = 3`` / ``x = 2 and x = 3`` → ``('x', ('2', '3'))``."""
    parts = re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+", text)
    variables, roots = set(), []
    for part in parts:
        match = _NAMED.match(part.strip())
        if not match:
            raise ClaimError(f"cannot read the values in {text!r}")
        variables.add(match[1])
        parse(match[2])
        roots.append(match[2].strip())
    if len(variables) != 1:
        raise ClaimError(f"values of more than one unknown in {text!r}")
    return variables.pop(), tuple(roots)
