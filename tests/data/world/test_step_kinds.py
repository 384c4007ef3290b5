"""What an equality step asks, and whether a square's terms came out right (data.world.step_kinds)."""

from __future__ import annotations

import random

import pytest

from data.world.families import blueprint
from data.world.proofs import world_proofs
from data.world.step_kinds import (KINDS, bracket_products, equality_steps, formula_terms, opened_monomials, square_terms,
                                   step_kind)
from data.world.steps import render_steps


@pytest.mark.parametrize(("text", "products"), [
    ("(3x + 5)(3x - 5) + 25", 1),
    ("(4a - 7b)^2 - (4a + 7b)^2", 2),
    ("2(x + 1)(x - 3)", 2),
    ("(x + 1)^3", 2),
    ("4(x - 6)^2", 1),
    ("a^2 - (a^2 - 32ab + 64b^2)", 0),  # a minus before a bracket multiplies nothing out
    ("(4a)^2 + 2(4a)(-7b) + (-7b)^2", 0),  # products of single terms
    ("9x^2 - 25 + 25", 0),
    ("x + = 2", None),
])
def test_bracket_products_are_counted_as_written(text: str, products: int | None) -> None:
    assert bracket_products(text) == products


def test_step_kinds_name_what_the_step_asks() -> None:
    assert [step_kind(0, 0), step_kind(1, 0), step_kind(2, 0), step_kind(5, 0), step_kind(0, 2), step_kind(1, 1)] == list(KINDS)


def test_every_step_of_the_worlds_correct_proofs_is_true_and_read() -> None:
    proofs = [proof for proof in world_proofs(seed=3, problems_per_template=2, families=("identity", "equation"),
                                              levels=(1, 2)) if proof.score == 1.0]
    steps = [step for proof in proofs for step in equality_steps(proof.proof)]
    assert steps and all(step is not None and step[1] for step in steps)
    assert {"expand 1", "expand 2", "factor", "collect"} <= {step[0] for step in steps if step is not None}


def test_the_worlds_squares_are_read_term_by_term_and_all_right() -> None:
    proofs = [proof for proof in world_proofs(seed=3, problems_per_template=3, families=("identity",), levels=(1, 2))
              if proof.score == 1.0 and proof.problem.template in ("square_sum", "square_difference")]
    terms = [term for proof in proofs for term in square_terms(proof.proof)]
    assert len(terms) == 6 * len(proofs)  # two squares a proof, three terms each
    assert all(right for _, right in terms)


def test_a_wrong_cross_term_is_found_and_the_squares_still_count_right() -> None:
    right = "Step 1: (4a - 7b)^2 - (4a + 7b)^2 = 16a^2 - 56ab + 49b^2 - (16a^2 + 56ab + 49b^2), by the binomial formula."
    wrong = right.replace("+ 56ab", "+ 54ab")
    assert opened_monomials("16a^2 - 56ab + 49b^2 - (16a^2 + 56ab + 49b^2)") == [
        "16a^2", "-56ab", "49b^2", "16a^2", "56ab", "49b^2"]
    assert [right for _, right in square_terms(right)] == [True] * 6
    assert square_terms(wrong) == [("square term", True), ("cross term", True), ("square term", True),
                                   ("square term", True), ("cross term", False), ("square term", True)]
    assert equality_steps(wrong) == [("expand 2", False)]


def test_steps_of_other_shapes_give_no_square_terms() -> None:
    assert square_terms("Step 1: (2x + 6)(x + 7) = 2x^2 + 20x + 42, by multiplying out.") == []
    assert square_terms("Step 1: (a + 2b)^2 = a^2 + 4b^2, by the binomial formula.") == []  # two monomials, not three


@pytest.mark.parametrize("template", ["square_sum", "square_difference"])
@pytest.mark.parametrize("level", [1, 2])
def test_both_forms_of_the_world_give_the_same_square_terms_all_right(template: str, level: int) -> None:
    for seed in range(3):
        fine = render_steps(list(blueprint("identity", template, random.Random(seed), level, fine=True).steps))
        default = render_steps(list(blueprint("identity", template, random.Random(seed), level).steps))
        assert sorted(square_terms(fine)) == sorted(square_terms(default)) == sorted(
            [("square term", True)] * 4 + [("cross term", True)] * 2)


@pytest.mark.parametrize("template", ["square_sum", "square_difference"])
def test_a_fine_square_of_three_terms_is_read_term_by_term(template: str) -> None:
    fine = render_steps(list(blueprint("identity", template, random.Random(0), 3, fine=True).steps))
    assert sorted(square_terms(fine)) == sorted([("square term", True)] * 6 + [("cross term", True)] * 6)


def test_the_fine_forms_formula_terms_are_judged_one_by_one() -> None:
    assert formula_terms("(4a)^2 + 2(4a)(-7b) + (-7b)^2", "16a^2 - 56ab + 49b^2") == [
        ("square term", True), ("cross term", True), ("square term", True)]
    assert formula_terms("x^2 - ((4a)^2 + 2(4a)(-7b) + (-7b)^2)", "x^2 - (16a^2 - 28ab + 49b^2)") == [
        ("square term", True), ("cross term", False), ("square term", True)]
    assert formula_terms("(4a)^2 + 2(4a)(-7b) + (-7b)^2", "16a^2 + 49b^2") == [  # the cross term left out
        ("square term", True), ("cross term", False), ("square term", True)]
    assert formula_terms("2ab + 2(a)(b)", "2ab + 3ab") == [("cross term", False)]  # a copied 2ab is not its value
    assert formula_terms("(2x + 6)(x + 7)", "2x^2 + 20x + 42") == []  # no formula term
