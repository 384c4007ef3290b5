"""Final-answer extraction and sympy equivalence: expressions, sets, intervals, tuples, LaTeX, text."""

from __future__ import annotations

import time

import pytest
import sympy

import eval.answer_check as answer_check
from eval.answer_check import check_answer, check_proof_answer, extract_final_answer
from eval.answer_parse import parse_answer
from eval.latex_math import latex_to_sympy_text, parse_math


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        (r"\frac{1}{2}", sympy.Rational(1, 2)),
        (r"\dfrac12", sympy.Rational(1, 2)),
        (r"\tfrac{3}{4}", sympy.Rational(3, 4)),
        (r"\sqrt{8}", 2 * sympy.sqrt(2)),
        (r"\sqrt[3]{27}", sympy.Integer(3)),
        (r"3\sqrt2", 3 * sympy.sqrt(2)),
        (r"2\pi", 2 * sympy.pi),
        (r"2^{10}", sympy.Integer(1024)),
        (r"2^10", sympy.Integer(1024)),  # a bare digit run is one exponent
        (r"3 \cdot 4", sympy.Integer(12)),
        (r"2 \times 3", sympy.Integer(6)),
        (r"\binom{5}{2}", sympy.Integer(10)),
        (r"5!", sympy.Integer(120)),
        (r"1{,}000", sympy.Integer(1000)),
        (r"50\%", sympy.Rational(1, 2)),
        (r"30^\circ", sympy.Integer(30)),
        (r"\left(\frac{1}{2}\right)^{2}", sympy.Rational(1, 4)),
        (r"e^{i\pi}", sympy.Integer(-1)),
        (r"\ln e", sympy.Integer(1)),
        (r"-\infty", -sympy.oo),
    ],
)
def test_parse_math_reads_latex(latex: str, expected: sympy.Expr) -> None:
    value = parse_math(latex)
    assert value == expected or sympy.simplify(value - expected) == 0


def test_parse_math_symbols() -> None:
    x, y, a_1 = sympy.symbols("x y a_1")
    assert parse_math("xy + 2x") == x * y + 2 * x  # letters typeset side by side multiply
    assert parse_math("a_{1} + 1") == a_1 + 1
    assert parse_math(r"\alpha + \lambda") == sympy.Symbol("alpha") + sympy.Symbol("lamda")
    assert latex_to_sympy_text(r"\frac{a}{b}") == "((a)/(b))"


@pytest.mark.parametrize(
    "latex",
    [
        r"\text{no solution}",  # words are text, not a product of letters
        "x or y",
        r"2^{100000}",  # too large to evaluate
        r"2^{2^{2^{10}}}",
        "100000!",
        "(10^5)!",
        "__import__('os').system('echo unsafe')",  # never reaches eval
        "x.real",
        r"\unknowncommand{1}",
        "(1, 2)",  # a tuple is not an expression
        "",
    ],
)
def test_parse_math_refuses(latex: str) -> None:
    with pytest.raises(ValueError):
        parse_math(latex)


def test_extract_final_answer_takes_the_last_balanced_box() -> None:
    proof = r"First \boxed{1}. So the set is \boxed{\{1, \frac{1}{2}\}}."
    assert extract_final_answer(proof) == r"\{1, \frac{1}{2}\}"
    assert extract_final_answer(r"<think>\boxed{7}</think> Thus \boxed{3}") == "3"
    assert extract_final_answer(r"\boxed{\boxed{2}}") == r"\boxed{2}"  # the outer box closes last
    assert extract_final_answer("No box here.") is None


EQUIVALENT = [
    (r"\frac{1}{2}", "0.5"),
    (r"\frac{\sqrt{2}}{2}", r"\frac{1}{\sqrt{2}}"),
    (r"2\sqrt{2}", r"\sqrt{8}"),
    (r"x^2+2x+1", r"(x+1)^2"),
    (r"\frac{n(n+1)}{2}", r"\binom{n+1}{2}"),
    (r"\sin^2 x + \cos^2 x", "1"),
    (r"1 + 2i", r"2i + 1"),
    (r"\sqrt{x^2}", "x"),  # variables are sampled positive
    (r"2^{2024}", r"2 \cdot 2^{2023}"),
    (r"\{1, 2, 3\}", r"\{3, 2, 1\}"),
    ("1, 2", "2, 1"),
    ("3", r"\{3\}"),
    (r"\emptyset", r"\varnothing"),
    (r"(0, 1]", r"(0,1]"),
    (r"[2, \infty)", r"[2, +\infty)"),
    (r"[2, \infty)", r"x \ge 2"),
    (r"0 < x \le 1", r"(0, 1]"),
    (r"(0, 1)", r"0 < x < 1"),  # a pair reads as an interval next to one
    (r"(-\infty, 0) \cup (1, \infty)", r"(1, \infty) \cup (-\infty, 0)"),
    (r"(a, b, c) = (1, 2, 2)", "(1, 2, 2)"),
    ("n = 1", "1"),
    ("2 = x", "2"),
    (r"f(x) = 2x", "2x"),
    ("x + y = 1", "1 - x = y"),
    ("y = 1 - x", "1 - x"),
    ("x + y < 1", "1 > x + y"),
    (r"$\dfrac{3}{4}$", r"75\%"),
    (r"\text{Yes}", "yes."),
]


@pytest.mark.parametrize(("answer", "reference"), EQUIVALENT)
def test_equivalent_answers(answer: str, reference: str) -> None:
    result = check_answer(answer, reference)
    assert result.equivalent is True, result


NOT_EQUIVALENT = [
    (r"\frac{1}{3}", "0.33"),
    (r"\pi", "3.14159"),
    (r"x^2+2x+1", r"(x-1)^2"),
    (r"\{1, 2\}", r"\{1, 3\}"),
    (r"\{1, 2\}", r"\{1, 2, 3\}"),
    ("(1, 2)", "(2, 1)"),  # tuples keep their order
    (r"(0, 1]", r"[0, 1]"),
    (r"[2, \infty)", r"x > 2"),
    ("x < 3", "x < 4"),
    ("x + y < 1", "x + y > 1"),
    (r"\text{no solution}", r"\text{none}"),  # two different texts
]


@pytest.mark.parametrize(("answer", "reference"), NOT_EQUIVALENT)
def test_different_answers(answer: str, reference: str) -> None:
    result = check_answer(answer, reference)
    assert result.equivalent is False, result


def test_text_against_math_is_undecided() -> None:
    result = check_answer(r"\text{all odd } n", "5")
    assert result.equivalent is None and result.method == "text"
    assert "answer is not math" in result.reason
    huge = check_answer(r"2^{2^{2^{10}}}", "5")
    assert huge.equivalent is None and "too large" in huge.reason


def test_result_carries_the_parsed_forms() -> None:
    result = check_answer(r"\{\frac{1}{2}, 2\}", r"\{2, 0.5\}")
    assert (result.equivalent, result.method) == (True, "math")
    assert (result.answer_form, result.reference_form) == ("{1/2, 2}", "{2, 0.500000000000000}")
    assert str(parse_answer(r"(0, \infty)")) == "(0, oo)"
    assert str(parse_answer(r"x \le 3")) == "(-oo, 3]"


def test_check_proof_answer() -> None:
    proof = r"We show every such $n$ works. Hence the answer is $\boxed{\frac{6}{4}}$."
    assert check_proof_answer(proof, "1.5").equivalent is True
    assert check_proof_answer(proof, "2").equivalent is False
    missing = check_proof_answer("A proof without a final box.", "2")
    assert (missing.equivalent, missing.method) == (None, "none")


def test_a_slow_comparison_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(first: object, second: object) -> bool:
        time.sleep(5)
        return True

    monkeypatch.setattr(answer_check, "answers_equal", slow)
    started = time.monotonic()
    result = check_answer("x + 1", "1 + x + 0*y", time_limit=0.2)
    assert time.monotonic() - started < 2
    assert result.equivalent is None and "gave up" in result.reason


def test_case_matters_in_math_but_not_in_text() -> None:
    assert check_answer("2N", "2n").equivalent is False
    assert check_answer(r"\Gamma", r"\gamma").equivalent is False
    assert check_answer(r"\text{No}", r"\textbf{no}.").equivalent is True
