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

import itertools
import re
from dataclasses import dataclass
from typing import Literal

import sympy

from data.world.expressions import ExpressionError, equal, parse

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
        """Decide the claim; ``Undecidable`` when this world cannot, ``ExpressionError`` for a malformed side."""
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


def divisor(text: str) -> int:
    if not re.fullmatch(r"\s*\d+\s*", text) or int(text) < 1:
        raise ClaimError(f"a divisor must be a positive whole number, not {text!r}")
    return int(text)


def nonnegative(expression: sympy.Expr) -> bool:
    """Whether a polynomial of degree <= 2 is >= 0 for all real values (its augmented matrix is PSD)."""
    variables = sorted(expression.free_symbols, key=str)
    polynomial = sympy.Poly(sympy.expand(expression), *variables) if variables else None
    if polynomial is None:
        return bool(sympy.expand(expression) >= 0)
    if polynomial.total_degree() > 2:
        raise Undecidable(f"nonnegativity of a degree-{polynomial.total_degree()} polynomial")
    size = len(variables) + 1
    matrix = sympy.zeros(size, size)
    for monomial, coefficient in polynomial.terms():
        powered = [index for index, power in enumerate(monomial) for _ in range(power)]
        if len(powered) == 2:
            first, second = powered
            if first == second:
                matrix[first, first] += coefficient
            else:
                matrix[first, second] += coefficient / 2
                matrix[second, first] += coefficient / 2
        elif len(powered) == 1:
            matrix[powered[0], size - 1] += coefficient / 2
            matrix[size - 1, powered[0]] += coefficient / 2
        else:
            matrix[size - 1, size - 1] += coefficient
    return all(matrix.extract(list(rows), list(rows)).det() >= 0
               for count in range(1, size + 1) for rows in itertools.combinations(range(size), count))


def divisible_everywhere(expression: sympy.Expr, modulus: int) -> bool:
    """Whether an integer polynomial takes only multiples of ``modulus`` at integer points."""
    expanded = sympy.expand(expression)
    variables = sorted(expanded.free_symbols, key=str)
    coefficients = sympy.Poly(expanded, *variables).coeffs() if variables else [expanded]
    if not all(coefficient.is_integer for coefficient in coefficients):
        raise Undecidable("divisibility of a polynomial with fractional coefficients")
    if modulus ** len(variables) > MAX_RESIDUE_CASES:
        raise Undecidable(f"{modulus}^{len(variables)} residue cases")
    for values in itertools.product(range(modulus), repeat=len(variables)):
        if int(expanded.subs(dict(zip(variables, values)))) % modulus:
            return False
    return True


def solution_set(expression: sympy.Expr, variable: str) -> set[sympy.Expr]:
    """The real solutions of ``expression = 0`` in one unknown."""
    unknown = sympy.Symbol(variable)
    if expression.free_symbols - {unknown}:
        raise Undecidable("an equation in more than one unknown")
    if sympy.expand(expression) == 0:
        raise Undecidable("an equation that holds for every value")
    return {root for root in sympy.solve(sympy.expand(expression), unknown) if root.is_real}


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
