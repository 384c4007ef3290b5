"""Read a short LaTeX answer into its shape: expression, relation, set, tuple, interval or union.

* A relation (``=``, ``<``, ``\\le``, ...) keeps one direction: ``a > b`` is ``b < a``; a
  single variable against a number is an interval (``x \\ge 2`` is ``[2, \\infty)``), and so
  is ``0 < x \\le 1``. ``x = 3``, ``f(x) = x^2`` and ``(a, b) = (1, 2)`` read as their
  right-hand side (so ``y = 1 - x`` no longer equals ``x + y = 1``), ``3 = x`` as 3.
* ``\\{1, 2\\}`` and a bare list ``1, 2`` are sets; ``(1, 2)`` and ``[1, 2]`` are tuples
  (a pair may still be read as an interval by the comparison); ``(0, 1]``, ``[2, \\infty)``
  and any pair with an infinite end are intervals; ``\\cup`` joins pieces into a union.
* Each expression goes through :func:`eval.latex_math.parse_math`; anything it refuses
  (words, unknown commands, numbers too large to evaluate) makes the answer not math.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy

from eval.latex_math import parse_math

_RELATION = re.compile(r"\\(?:leqslant|geqslant|leq?|geq?|neq?|lt|gt)(?![A-Za-z])|<=|>=|!=|=|<|>|≤|≥|≠")
_OPERATOR = {"\\le": "<=", "\\leq": "<=", "\\leqslant": "<=", "≤": "<=", "\\ge": ">=", "\\geq": ">=", "\\geqslant": ">=",
             "≥": ">=", "\\ne": "!=", "\\neq": "!=", "≠": "!=", "\\lt": "<", "\\gt": ">"}
_COMMA, _UNION = re.compile(","), re.compile(r"\\cup(?![A-Za-z])|∪")
_NAME = r"(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\w+\}?)?"
_LEFT_HAND_SIDE = re.compile(rf"\s*(?:{_NAME}(?:\s*\([^()]*\))?|\(\s*{_NAME}(?:\s*,\s*{_NAME})*\s*\))\s*")


@dataclass(frozen=True)
class Answer:
    """A parsed answer: ``kind`` names how ``value`` is laid out."""

    kind: str
    """expression (sympy.Expr), relation ((lhs, op, rhs), op one of = != < <=), set, union,
    tuple (tuples of Answer), interval ((low, high, left_open, right_open))."""
    value: Any
    brackets: str = ""
    """For a tuple: "()" or "[]", so that a pair can be read as an interval."""

    def __str__(self) -> str:
        if self.kind == "expression":
            return show(self.value)
        if self.kind == "relation":
            return f"{show(self.value[0])} {self.value[1]} {show(self.value[2])}"
        if self.kind == "interval":
            low, high, left_open, right_open = self.value
            return f"{'(' if left_open else '['}{show(low)}, {show(high)}{')' if right_open else ']'}"
        if self.kind == "union":
            return " U ".join(map(str, self.value))
        inner = ", ".join(map(str, self.value))
        return f"{{{inner}}}" if self.kind == "set" else f"{self.brackets[:1]}{inner}{self.brackets[1:]}"


def show(expression: sympy.Basic) -> str:
    """str() of a sympy object, which fails for integers beyond Python's printing limit."""
    try:
        return str(expression)
    except ValueError:
        return "<number too long to print>"


def _clean(latex: str) -> str:
    text = latex.strip()
    for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opening) and text.endswith(closing) and len(text) > len(opening) + len(closing):
            text = text[len(opening): -len(closing)].strip()
    text = re.sub(r"\\(?:left|right)\.|\\(?:left|right|displaystyle|[Bb]ig[lr]?)(?![A-Za-z])|\\[,;:! ]|\\q?quad(?![A-Za-z])|~", "", text)
    return text.strip().rstrip(".").strip()


def _depth_change(char: str) -> int:
    return 1 if char in "([{" else -1 if char in ")]}" else 0


def _split_top(text: str, separator: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """Pieces of ``text`` split at separators outside any bracket, and the separators found."""
    pieces, found, depth, start, index = [], [], 0, 0, 0
    while index < len(text):
        match = separator.match(text, index) if depth == 0 else None
        if match and match.end() > index:
            pieces.append(text[start:index])
            found.append(match.group())
            start = index = match.end()
            continue
        depth += _depth_change(text[index])
        index += 1
    return [*pieces, text[start:]], found


def _wraps_whole(text: str, opener_length: int) -> bool:
    """True when the bracket that opens ``text`` (``(``, ``[`` or ``\\{``) closes at its very end."""
    depth = 0
    for index, char in enumerate(text):
        depth += _depth_change(char)
        if depth == 0 and opener_length - 1 <= index < len(text) - 1:
            return False
    return depth == 0


def parse_answer(latex: str) -> Answer:
    """Read a LaTeX answer (see the module docstring); ValueError when it is not math."""
    text = _clean(latex)
    if not text:
        raise ValueError("empty answer")
    pieces, _ = _split_top(text, _UNION)
    return _parse_piece(text) if len(pieces) == 1 else Answer("union", tuple(map(_parse_piece, pieces)))


def _parse_piece(text: str) -> Answer:
    text = text.strip()
    sides, operators = _split_top(text, _RELATION)
    operators = [_OPERATOR.get(operator, operator) for operator in operators]
    if operators:
        if set(operators) == {"="} and all(_LEFT_HAND_SIDE.fullmatch(side) for side in sides[:-1]):
            return _parse_piece(sides[-1])
        if operators == ["="] and _LEFT_HAND_SIDE.fullmatch(sides[1]) and not parse_math(sides[0]).free_symbols:
            return _parse_piece(sides[0])  # 2 = x; but 1 - x = y stays an equation
        directions = {operator[0] for operator in operators}
        if len(operators) == 2 and _LEFT_HAND_SIDE.fullmatch(sides[1]) and directions in ({"<"}, {">"}):
            low, high = parse_math(sides[0]), parse_math(sides[2])
            if operators[0][0] == ">":  # 3 > x >= 1 is [1, 3)
                low, high, operators = high, low, operators[::-1]
            return Answer("interval", (low, high, operators[0] in ("<", ">"), operators[1] in ("<", ">")))
        if len(operators) > 1:
            raise ValueError(f"unsupported chain of relations in {text!r}")
        left, right, operator = parse_math(sides[0]), parse_math(sides[1]), operators[0]
        if operator in (">", ">="):  # one direction only: a > b is b < a
            left, right, operator = right, left, operator.replace(">", "<")
        if operator in ("<", "<=") and isinstance(left, sympy.Symbol) and right.is_number:  # x <= 3 is (-oo, 3]
            return Answer("interval", (-sympy.oo, right, True, operator == "<"))
        if operator in ("<", "<=") and isinstance(right, sympy.Symbol) and left.is_number:  # x > 2 is (2, oo)
            return Answer("interval", (left, sympy.oo, operator == "<", True))
        return Answer("relation", (left, operator, right))
    if text in ("\\emptyset", "\\varnothing", "\\{\\}", "∅"):
        return Answer("set", ())
    if text.startswith("\\{") and text.endswith("\\}") and _wraps_whole(text, 2):
        return Answer("set", tuple(map(_parse_piece, _split_top(text[2:-2], _COMMA)[0])))
    if text[:1] in "([" and text[-1:] in ")]" and _wraps_whole(text, 1):
        items = _split_top(text[1:-1], _COMMA)[0]
        brackets = text[0] + text[-1]
        if len(items) == 1:
            return _parse_piece(items[0])
        if len(items) == 2 and (brackets in ("(]", "[)") or "infty" in text or "∞" in text):
            low, high = parse_math(items[0]), parse_math(items[1])
            return Answer("interval", (low, high, brackets[0] == "(", brackets[1] == ")"))
        return Answer("tuple", tuple(map(_parse_piece, items)), brackets)
    items = _split_top(text, _COMMA)[0]
    if len(items) > 1:
        return Answer("set", tuple(map(_parse_piece, items)))
    return Answer("expression", parse_math(text))
