"""data.world.expressions: plain-text math to sympy and back, safe on any text."""

from __future__ import annotations

import pytest
import sympy
from sympy.parsing.sympy_parser import parse_expr

from data.world.expressions import (LETTERS, TRANSFORMATIONS, ExpressionError, cleaned_text, equal, parse, quick, render,
                                    top_level_terms)

a, b, x = sympy.symbols("a b x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a^2 - 2ab + b^2", a**2 - 2 * a * b + b**2), ("(x - 2)(x - 3)", (x - 2) * (x - 3)), ("2(a + b)", 2 * a + 2 * b),
     ("x·x", x**2), ("-(a - b)^2", -(a - b) ** 2), ("x**3", x**3)],
)
def test_people_s_notation_parses(text: str, expected: sympy.Expr) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text", ['__import__("os").system("true")', "x^99", "a^x", "1.5x", "x = 2", "E + 1", "", "x^2 + (", "1/0", "x_1"],
)
def test_anything_else_is_refused_before_sympy_evaluates_it(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse(text)


def test_letters_are_variables_never_sympy_names() -> None:
    assert parse("sin") == sympy.Symbol("s") * sympy.Symbol("i") * sympy.Symbol("n")
    assert parse("i^2") == sympy.Symbol("i") ** 2  # not the imaginary unit


def test_render_writes_powers_and_products_as_people_do_and_parses_back() -> None:
    for expression in (sympy.expand((a + b) ** 2), (x - 2) * (x + 3), 4 * a * b, -(x**2) + 9):
        text = render(expression)
        assert "**" not in text and "*" not in text
        assert parse(text) == expression
    assert render(sympy.expand((a + b) ** 2)) == "a^2 + 2ab + b^2"


def test_equality_is_decided_by_expansion() -> None:
    assert equal(parse("(a + b)^2"), parse("a^2 + 2ab + b^2"))
    assert not equal(parse("(a + b)^2"), parse("a^2 + b^2"))


def test_top_level_terms_keep_signs_and_brackets() -> None:
    assert top_level_terms("a^2 - 2ab + b^2 - (a^2 - 2ab)") == ["a^2", "- 2ab", "+ b^2", "- (a^2 - 2ab)"]
    assert top_level_terms("-x + 1") == ["-x", "+ 1"]


@pytest.mark.parametrize(
    "text",
    ["x(x + 1)", "(x + 1) x", "2 x", "2(x)(y)", "-x^2", "-(a - b)^2", "3/2x", "1/2 x", "a*b/c", "(a)(b)c", "x^2(x + 1)",
     "-2^2", "4 - -3", "+5", "3+-2", "((2))", "x - - x", "2*-3", "(x - 1)/(x + 1)", "2/4", "3·(4 + 5) - 2·7", "(-3)^3",
     "12n^2 + 36n + 24", "x2", "x^02", "007"],
)
def test_the_quick_reading_is_exactly_sympy_s(text: str) -> None:
    """``quick`` (Python's evaluation of the same tokens) builds what ``parse_expr`` builds, or leaves the text to it."""
    spaced = cleaned_text(text)
    slow = parse_expr(spaced, local_dict=dict(LETTERS), transformations=TRANSFORMATIONS)
    fast = quick(spaced)
    assert fast is None or (fast == slow and fast.args == slow.args)
    assert parse(text) == slow


def test_a_tower_of_powers_is_refused_before_it_is_computed() -> None:
    with pytest.raises(ExpressionError):
        parse("2^12^12")
    assert parse("(2^12)^2") == 2**24


def test_equality_of_polynomials_and_of_fractions() -> None:
    assert equal(parse("(x + 1)(x - 1)"), parse("x^2 - 1")) and not equal(parse("(x + 1)^2"), parse("x^2 + 1"))
    assert equal(parse("1/(x + 1) + 1/(x + 1)"), parse("2/(x + 1)"))
    assert not equal(parse("x/(x + 1)"), parse("1"))
