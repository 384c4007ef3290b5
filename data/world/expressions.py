"""Plain-text math as people type it (``a^2 - 2ab + b^2``, ``(x - 2)(x - 3)``), to sympy and back.

Parsing is safe on any text, model output included: only digits, lower-case single-letter
variables, ``+ - * / ^ ( )`` and spaces are accepted, every letter becomes a
``sympy.Symbol`` (never a sympy function or constant), and anything else is refused with
``ExpressionError`` before sympy sees it (``parse_expr`` evaluates Python). Adjacent
letters multiply (``2ab`` is ``2*a*b``), as does juxtaposition with a bracket.
"""

from __future__ import annotations

import re
from functools import lru_cache
from tokenize import TokenError

import sympy
from sympy.parsing.sympy_parser import convert_xor, implicit_multiplication, parse_expr, standard_transformations

ALLOWED = re.compile(r"^[0-9a-z+\-*/^() .]+$")
TRANSFORMATIONS = (*standard_transformations, implicit_multiplication, convert_xor)
LETTERS = {letter: sympy.Symbol(letter) for letter in "abcdefghijklmnopqrstuvwxyz"}
MAX_LENGTH = 400
MAX_EXPONENT = 12


class ExpressionError(ValueError):
    """Text that is not an expression of this world."""


@lru_cache(maxsize=4096)
def parse(text: str) -> sympy.Expr:
    """The expression ``text`` writes, evaluated (``2(a + b)`` is ``2a + 2b``); ExpressionError if it is not one."""
    cleaned = " ".join(text.replace("−", "-").replace("·", "*").replace("×", "*").split())
    if not cleaned or len(cleaned) > MAX_LENGTH or not ALLOWED.match(cleaned):
        raise ExpressionError(f"not an expression: {text!r}")
    if re.search(r"\d\s+\d|\.", cleaned):
        raise ExpressionError(f"not an expression: {text!r}")
    cleaned = cleaned.replace("**", "^")
    exponents = re.findall(r"\^\s*(\d*)", cleaned)
    if any(not exponent or int(exponent) > MAX_EXPONENT for exponent in exponents):
        raise ExpressionError(f"powers must be whole numbers up to {MAX_EXPONENT}: {text!r}")
    spaced = re.sub(r"(?<=[a-z])(?=[a-z])", "*", cleaned)  # every letter its own variable
    try:
        expression = parse_expr(spaced, local_dict=dict(LETTERS), transformations=TRANSFORMATIONS)
    except (SyntaxError, TypeError, ValueError, TokenError, ZeroDivisionError) as error:
        raise ExpressionError(f"not an expression: {text!r}") from error
    if not isinstance(expression, sympy.Expr) or expression.has(sympy.zoo, sympy.nan):
        raise ExpressionError(f"not an expression: {text!r}")
    return expression


def equal(left: sympy.Expr, right: sympy.Expr) -> bool:
    """Whether two polynomial expressions agree for every value of their variables."""
    return sympy.expand(left - right) == 0


def render(expression: sympy.Expr) -> str:
    """``expression`` as a person writes it: ``^`` for powers, juxtaposition for products."""
    text = sympy.sstr(expression, order="grlex")
    text = text.replace("**", "^")
    text = re.sub(r"(?<=[0-9a-z)])\*(?=[a-z(])", "", text)
    return text.replace("*", "·")


def top_level_terms(text: str) -> list[str]:
    """Split a sum at its top level, signs kept with their terms: ``a^2 - 2ab + b^2`` → ``['a^2', '- 2ab', '+ b^2']``."""
    terms, depth, current = [], 0, ""
    for position, character in enumerate(text):
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if depth == 0 and character in "+-" and current.strip() and text[position - 1] == " ":
            terms.append(current.strip())
            current = ""
        current += character
    if current.strip():
        terms.append(current.strip())
    return terms
