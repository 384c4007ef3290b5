"""How the families write their math and their sentences: coefficients before variables, signs, brackets, statements.

Shared by every family module; nothing here draws a problem. The helpers keep the text as a
person types it (``x - 3``, never ``x + -3``), so the problem and proof texts read naturally.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable

import sympy

from data.world.expressions import expansion, parse, render, top_level_terms


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


def joined(*terms: str) -> str:
    """``2a - 3b + c`` from ``("2a", "-3b", "c")``."""
    text = terms[0]
    for term in terms[1:]:
        text = plus(text, term)
    return text


def difference(left: str, right: str) -> str:
    """``left - right``, bracketing ``right`` when it is a sum (``left - -6ab`` is ``left + 6ab``)."""
    if len(sympy.Add.make_args(parse(right))) > 1:
        return f"{left} - ({right})"
    return f"{left} + {right[1:]}" if right.startswith("-") else f"{left} - {right}"


def substitute(text: str, variable: str, value: str) -> str:
    """``text`` with ``variable`` replaced by ``value`` as a person writes it: ``2n`` at 1 is ``2·1``, at ``(n + 1)`` is ``2(n + 1)``."""
    if value.lstrip("-").isdigit():
        text = re.sub(rf"(?<=[0-9)]){variable}", f"·{value}", text)
    return text.replace(variable, value)


def bracketed(text: str) -> str:
    return f"({text})" if len(top_level_terms(text)) > 1 else text


@functools.lru_cache(maxsize=65536)
def expanded(text: str) -> str:
    return render(expansion(parse(text)))


def linear(variable: str, offset: int) -> str:
    """``n``, ``(n + 2)``, ``(n - 3)``: a factor ``variable + offset`` as it stands in a product."""
    return variable if offset == 0 else f"({plus(variable, str(offset))})"


def product(coefficient: int, variable: str, offsets: Iterable[int]) -> str:
    """``3n(n + 1)``, ``(n - 1)n(n + 1)``: ``coefficient`` times the factors ``variable + offset``."""
    factors = "".join(linear(variable, offset) for offset in offsets)
    return factors if coefficient == 1 else f"{coefficient}{factors}"


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


def new_divisors(whole: int, part: int) -> list[int]:
    """The divisors of ``whole`` that do not divide ``part``, in increasing order (what ``whole`` adds to ``part``)."""
    return [divisor for divisor in range(2, whole + 1) if whole % divisor == 0 and part % divisor]
