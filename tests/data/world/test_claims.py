"""data.world.claims: the four kinds of statement, read from text and decided exactly."""

from __future__ import annotations

import random

import pytest
import sympy

from data.world.claims import Claim, ClaimError, Undecidable, divisible_everywhere, parse_claim, solution_set
from data.world.expressions import parse


@pytest.mark.parametrize(
    ("text", "kind", "true"),
    [
        ("(a + b)^2 - (a - b)^2 = 4ab", "equal", True),
        ("(a + b)^2 = a^2 + b^2", "equal", False),
        ("a^2 + b^2 ≥ 2ab", "at_least", True),
        ("x^2 + 9 >= 6x", "at_least", True),
        ("x^2 + 4 >= 5x", "at_least", False),
        ("2a^2 + 2b^2 + 2c^2 >= 2ab + 2bc + 2ca", "at_least", True),
        ("n^2 + n is even", "divisible", True),
        ("6 divides n^3 - n", "divisible", True),
        ("n^3 - n is a multiple of 4", "divisible", False),
        ("(2n + 1)^2 - 1 is divisible by 8", "divisible", True),
        ("x^2 - 5x + 6 = 0 exactly when x = 2 or x = 3", "solutions", True),
        ("the solutions of x^2 - 5x + 6 = 0 are x = 2 and x = 4", "solutions", False),
        ("x^2 - 4x + 4 = 0 exactly when x = 2", "solutions", True),
        ("x^2 + 1 = 0 exactly when x = 1", "solutions", False),
    ],
)
def test_claims_are_read_and_decided(text: str, kind: str, true: bool) -> None:
    claim = parse_claim(text)
    assert claim.kind == kind and claim.is_true() is true


def test_every_written_form_reads_back_as_the_same_claim() -> None:
    for claim in (Claim("at_least", "a^2 + b^2", "2ab"), Claim("divisible", "n^2 + n", "2"),
                  Claim("solutions", "x^2 - 1", "0", "x", ("-1", "1")), Claim("equal", "(x + 1)^2", "x^2 + 2x + 1")):
        for style in range(6):
            assert parse_claim(claim.render(style)) == claim


def test_what_this_world_cannot_decide_says_so() -> None:
    with pytest.raises(Undecidable):
        parse_claim("x^4 + 1 >= 0").is_true()
    with pytest.raises(Undecidable):
        parse_claim("x + y = 0 exactly when x = 0").is_true()
    for text in ("we are done", "x is positive", "the claim holds", "x = "):
        with pytest.raises(ClaimError):
            parse_claim(text)


def test_the_fast_deciders_agree_with_their_definitions() -> None:
    """Divisibility in Python integers and solution sets by factoring decide as substitution and ``sympy.solve`` do."""
    rng = random.Random(0)
    n, x = sympy.Symbol("n"), sympy.Symbol("x")
    for _ in range(40):
        polynomial = sum(rng.randint(-9, 9) * n**power for power in range(4))
        modulus = rng.randint(1, 12)
        by_substitution = all(int(sympy.expand(polynomial).subs(n, value)) % modulus == 0 for value in range(modulus))
        assert divisible_everywhere(polynomial, modulus) == by_substitution
    for text in ("(x - 3)(x + 5)(x - 7)", "x^2 - 2", "x^3 - 2", "(x^2 - 3)(x - 1)", "(2x - 3)^2(x + 1)", "x^4 + 1", "1/x - 2", "5"):
        expression = parse(text)
        assert solution_set(expression, "x") == {root for root in sympy.solve(expression, x) if root.is_real}
    claim = parse_claim("(x - 2)(x - 3) = 0 exactly when x = 2 or x = 3")
    assert claim.is_true() and claim.is_true() == claim.decide()
