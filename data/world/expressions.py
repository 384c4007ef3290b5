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
_NAME = re.compile(r"[a-z]\s*\d|(?<!\d)0\d")  # x2 is a name to sympy; 007 is no Python number
_JUXTAPOSED = re.compile(r"(?<=[0-9a-z)])\s*(?=[a-z(])")
_NUMBER = re.compile(r"\d+")


class ExpressionError(ValueError):
    """Text that is not an expression of this world."""


def cleaned_text(text: str) -> str:
    """``text`` ready for sympy (``·`` as ``*``, every letter its own variable); ExpressionError if it is not an expression."""
    cleaned = " ".join(text.replace("−", "-").replace("·", "*").replace("×", "*").split())
    if not cleaned or len(cleaned) > MAX_LENGTH or not ALLOWED.match(cleaned):
        raise ExpressionError(f"not an expression: {text!r}")
    if re.search(r"\d\s+\d|\.", cleaned):
        raise ExpressionError(f"not an expression: {text!r}")
    cleaned = cleaned.replace("**", "^")
    exponents = re.findall(r"\^\s*(\d*)", cleaned)
    if any(not exponent or int(exponent) > MAX_EXPONENT for exponent in exponents) or re.search(r"\^\s*\d+\s*\^", cleaned):
        raise ExpressionError(f"powers must be whole numbers up to {MAX_EXPONENT}: {text!r}")  # 2^12^12 is 2^(12^12)
    return re.sub(r"(?<=[a-z])(?=[a-z])", "*", cleaned)  # every letter its own variable


def quick(spaced: str) -> sympy.Expr | None:
    """What ``parse_expr`` makes of a cleaned text of single letters, whole numbers, operators and brackets, built by
    Python from the same tokens (numbers as sympy Integers, juxtaposition as ``*``) ten times faster; None for a text
    of any other shape (``x2``, a name to sympy; ``007``), which goes to ``parse_expr``. Safe: the text holds no names but
    single letters, and is evaluated without builtins."""
    if _NAME.search(spaced):
        return None
    code = _NUMBER.sub(lambda number: f"Integer({number[0]})", _JUXTAPOSED.sub("*", spaced).replace("^", "**"))
    return eval(code, {"__builtins__": {}, "Integer": sympy.Integer}, dict(LETTERS))  # noqa: S307 - see the docstring


@lru_cache(maxsize=16384)
def parse(text: str) -> sympy.Expr:
    """The expression ``text`` writes, evaluated (``2(a + b)`` is ``2a + 2b``); ExpressionError if it is not one."""
    spaced = cleaned_text(text)
    try:
        expression = quick(spaced)
        if expression is None:
            expression = parse_expr(spaced, local_dict=dict(LETTERS), transformations=TRANSFORMATIONS)
    except (SyntaxError, TypeError, ValueError, TokenError, ZeroDivisionError, IndexError) as error:
        raise ExpressionError(f"not an expression: {text!r}") from error
    if not isinstance(expression, sympy.Expr) or expression.has(sympy.zoo, sympy.nan):
        raise ExpressionError(f"not an expression: {text!r}")
    return expression


@lru_cache(maxsize=16384)
def form(text: str) -> sympy.Expr:
    """The expression as it stands in a chain of steps: ``parse(text)`` when ``text`` has a variable; a text of numbers
    only keeps its structure as written (``27 - 14`` is not ``13``, nor ``14 + 13 - 14``: evaluating it is a step), up
    to spacing, ``·``/``*`` and redundant brackets. ExpressionError as for ``parse``."""
    expression = parse(text)
    spaced = cleaned_text(text)
    if re.search(r"[a-z]", spaced):
        return expression
    try:
        written = parse_expr(spaced, transformations=TRANSFORMATIONS, evaluate=False)
    except (SyntaxError, TypeError, ValueError, TokenError, ZeroDivisionError, IndexError):
        return expression
    return written if isinstance(written, sympy.Expr) else expression


@lru_cache(maxsize=65536)
def expansion(expression: sympy.Expr) -> sympy.Expr:
    """``sympy.expand(expression)``, remembered (the sides of a proof's steps recur from step to step and proof to proof)."""
    return sympy.expand(expression)


def polynomial(expression: sympy.Expr) -> bool:
    """No variable is divided by (sympy's expansion of a polynomial is canonical: two are equal exactly when they match)."""
    return not any(node.is_Pow and node.exp.is_negative and node.base.free_symbols
                   for node in sympy.preorder_traversal(expression))


def equal(left: sympy.Expr, right: sympy.Expr) -> bool:
    """Whether two polynomial expressions agree for every value of their variables."""
    first, second = expansion(left), expansion(right)
    if first == second:
        return True
    if polynomial(first) and polynomial(second):
        return False
    return sympy.expand(left - right) == 0


@lru_cache(maxsize=65536)
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
