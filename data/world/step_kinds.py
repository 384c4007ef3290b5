"""What an equality step of a world proof asks its writer to compute, and whether the terms of a square came out right.

Read from any proof text (a model's included), so that where a model's arithmetic breaks can be
measured by kind of step rather than by proof:

- :func:`step_kind` bins an equality step ``L = R`` by the **bracketed products** each side writes,
  counted on the text as written (sympy's parse without evaluation): ``(3x + 5)(3x - 5)`` is one,
  ``(4a - 7b)^2 - (4a + 7b)^2`` two, ``(x + 1)^3`` two; a minus before a bracket multiplies nothing
  out, nor does ``2(4a)(-7b)``, a product of single terms. A step with products on the left only
  expands, on the right only factorises, on neither side adds and collects terms.
- :func:`square_terms` reads, in a step whose left side is a sum of squares of binomials and whose
  right side writes three monomials a square in order (the world's ``(4a - 7b)^2 - (4a + 7b)^2 =
  16a^2 - 56ab + 49b^2 - (16a^2 + 56ab + 49b^2)``), whether each square term (``p^2``, ``q^2``) and
  each cross term (``2pq``) is right; in the fine form (``world.fine_steps``) the same terms from the
  step that evaluates a square's formula (``(4a)^2 + 2(4a)(-7b) + (-7b)^2 = 16a^2 - 56ab + 49b^2``).
  Steps of any other shape give nothing.

Why: the bundled world model writes square terms right ~0.9 of the time and cross terms ~0.13, on
fresh problems and on its own training problems alike, while it multiplies two binomials right
~0.95 (benchmarks/world_step_errors.py, docs/results/world-model.md).
"""

from __future__ import annotations

import re
from tokenize import TokenError

from data.world.claims import ClaimError, Undecidable
from data.world.expressions import LETTERS, TRANSFORMATIONS, ExpressionError, cleaned_text, expansion, parse, top_level_terms
from data.world.steps import parse_steps

KINDS: tuple[str, ...] = ("collect", "expand 1", "expand 2", "expand 3+", "factor", "both sides")
"""No bracketed product on either side; products on the left only (1, 2, 3 or more); on the right only; on both."""
TERMS: tuple[str, ...] = ("square term", "cross term")
_SQUARE = re.compile(r"\((?P<first>[^()+-]+?)\s*(?P<second>[+-]\s*[^()+-]+)\)\^2")
_CROSS = re.compile(r"2\(-?[^()+-]+\)\(-?[^()+-]+\)")
_SQUARED_TERM = re.compile(r"\(-?[^()+-]+\)\^2")
_GROUP = re.compile(r"[+-]?\s*\((?P<inner>[^()]*(?:\([^()]*\)[^()]*)*[+-][^()]*(?:\([^()]*\)[^()]*)*)\)")


def bracket_products(text: str) -> int | None:
    """The bracketed products the expression ``text`` asks to multiply out, as written; None if it is no expression."""
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    try:
        written = parse_expr(cleaned_text(text), local_dict=dict(LETTERS), transformations=TRANSFORMATIONS, evaluate=False)
    except (ExpressionError, SyntaxError, TypeError, ValueError, TokenError, ZeroDivisionError, IndexError):
        return None
    count = 0
    for node in sympy.preorder_traversal(written):
        if isinstance(node, sympy.Mul) and any(isinstance(factor, sympy.Add) for factor in node.args):
            count += sum(factor != -1 for factor in node.args) - 1
        elif isinstance(node, sympy.Pow) and isinstance(node.base, sympy.Add) and node.exp.is_Integer:
            count += int(node.exp) - 1
    return count


def step_kind(left: int, right: int) -> str:
    """The kind (one of :data:`KINDS`) of a step whose sides write ``left`` and ``right`` bracketed products."""
    if left and right:
        return "both sides"
    if right:
        return "factor"
    return "collect" if left == 0 else f"expand {left if left < 3 else '3+'}"


def equality_steps(proof: str) -> list[tuple[str, bool] | None]:
    """Each equality step of ``proof`` as (its kind, whether it is true); None for one that cannot be read or decided."""
    steps: list[tuple[str, bool] | None] = []
    for step in parse_steps(proof):
        if step.claim is None or step.claim.kind != "equal":
            continue
        left, right = bracket_products(step.claim.left), bracket_products(step.claim.right)
        if left is None or right is None:
            steps.append(None)
            continue
        try:
            steps.append((step_kind(left, right), step.claim.is_true()))
        except (ExpressionError, ClaimError, Undecidable):
            steps.append(None)
    return steps


def opened_monomials(text: str) -> list[str]:
    """``text``'s top-level terms in order, a bracketed group's own terms in place of the group (its sign dropped: the
    other side of a step writes the same group under the same sign), spaces and a leading ``+`` removed."""
    terms: list[str] = []
    for term in top_level_terms(text):
        group = _GROUP.fullmatch(term)
        terms += opened_monomials(group["inner"]) if group else [term.replace(" ", "").removeprefix("+")]
    return terms


def _coefficient_and_monomial(term: str) -> tuple[object, object] | None:
    try:
        return expansion(parse(term)).as_coeff_Mul()
    except ExpressionError:
        return None


def formula_terms(left: str, right: str) -> list[tuple[str, bool]]:
    """The square's terms a step of the fine form evaluates (``(4a)^2 + 2(4a)(-7b) + (-7b)^2 = 16a^2 - 56ab + 49b^2``):
    each ``2(u)(v)`` on the left is a cross term, each ``(u)^2`` of a single term a square term, right when the terms
    the right side writes anew (those not copied from the left) hold its monomial with its coefficient."""
    left_terms, written = opened_monomials(left), opened_monomials(right)
    formulas = [(("cross term" if _CROSS.fullmatch(term.removeprefix("-")) else "square term"), term)
                for term in left_terms if _CROSS.fullmatch(term.removeprefix("-")) or _SQUARED_TERM.fullmatch(term)]
    if not formulas:
        return []
    for term in left_terms:  # what the step copies is not its work
        if term in written and not any(term == formula for _, formula in formulas):
            written.remove(term)
    values = [value for value in map(_coefficient_and_monomial, written) if value is not None]
    terms: list[tuple[str, bool]] = []
    for kind, formula in formulas:
        expected = _coefficient_and_monomial(formula)
        right = expected is not None and expected in values
        if right:
            values.remove(expected)
        terms.append((kind, right))
    return terms


def square_terms(proof: str) -> list[tuple[str, bool]]:
    """Each term of a square of a binomial that ``proof`` multiplies out, as (one of :data:`TERMS`, whether it is right):
    from a whole square at once (the default form) or from its formula (the fine form, :func:`formula_terms`)."""
    terms: list[tuple[str, bool]] = []
    for step in parse_steps(proof):
        if step.claim is None or step.claim.kind != "equal":
            continue
        terms += formula_terms(step.claim.left, step.claim.right)
        squares = [_SQUARE.fullmatch(term.lstrip("+- ")) for term in top_level_terms(step.claim.left)]
        written = opened_monomials(step.claim.right)
        if not squares or not all(squares) or len(written) != 3 * len(squares):
            continue
        for index, square in enumerate(squares):
            assert square is not None
            try:
                first, second = parse(square["first"]), parse(square["second"].replace(" ", ""))
            except ExpressionError:
                break
            expected = (first**2, 2 * first * second, second**2)
            for kind, value, text in zip(("square term", "cross term", "square term"), expected, written[3 * index:3 * index + 3]):
                try:
                    right = parse(text) == expansion(value)
                except ExpressionError:
                    right = False
                terms.append((kind, right))
    return terms
