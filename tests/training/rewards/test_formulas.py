"""Every combination of format pass/fail, s, s' and ms for the three rewards, against the formulas by hand."""

from __future__ import annotations

import itertools

import pytest

from training.rewards.formulas import ALPHA, BETA, generator_reward, meta_verifier_reward, verifier_reward

SCORES = (0.0, 0.5, 1.0)


@pytest.mark.parametrize(("predicted", "reference", "meta"), list(itertools.product((None, *SCORES), SCORES, SCORES)))
def test_verifier_reward_every_combination(predicted: float | None, reference: float, meta: float) -> None:
    expected = 0.0 if predicted is None else (1 - abs(predicted - reference)) * meta
    assert verifier_reward(predicted, reference, meta) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("predicted", "reference", "meta", "expected"),
    [(1.0, 1.0, 1.0, 1.0), (0.5, 1.0, 1.0, 0.5), (0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.5, 0.5), (None, 0.0, 1.0, 0.0),
     (0.5, 0.0, 0.5, 0.25)],
)
def test_verifier_reward_by_hand(predicted: float | None, reference: float, meta: float, expected: float) -> None:
    assert verifier_reward(predicted, reference, meta) == expected


@pytest.mark.parametrize(("predicted", "reference"), list(itertools.product((None, *SCORES), SCORES)))
def test_meta_verifier_reward_every_combination(predicted: float | None, reference: float) -> None:
    expected = 0.0 if predicted is None else 1 - abs(predicted - reference)
    assert meta_verifier_reward(predicted, reference) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("format_ok", "proof", "self_score", "meta"), list(itertools.product((True, False), SCORES, (None, *SCORES), SCORES))
)
def test_generator_reward_every_combination(format_ok: bool, proof: float, self_score: float | None, meta: float) -> None:
    reward = generator_reward(format_ok, proof, self_score, meta)
    if not format_ok or self_score is None:
        assert (reward.total, reward.format, reward.self_accuracy) == (0.0, 0.0, 0.0)
    else:
        accuracy = (1 - abs(self_score - proof)) * meta
        assert reward.format == 1.0 and reward.self_accuracy == pytest.approx(accuracy)
        assert reward.total == pytest.approx(ALPHA * proof + BETA * accuracy)
    assert reward.proof_score == proof


def test_generator_reward_by_hand() -> None:
    assert generator_reward(True, 1.0, 1.0, 1.0).total == pytest.approx(1.0)
    assert generator_reward(True, 0.0, 0.0, 1.0).total == pytest.approx(0.24)  # honest about a wrong proof
    assert generator_reward(True, 0.0, 1.0, 1.0).total == 0.0  # claims a wrong proof is right
    assert generator_reward(True, 0.5, 1.0, 0.5).total == pytest.approx(0.76 * 0.5 + 0.24 * 0.5 * 0.5)
    assert generator_reward(True, 0.75, 0.5, 1.0, alpha=0.5, beta=0.5).total == pytest.approx(0.5 * 0.75 + 0.5 * 0.75)


@pytest.mark.parametrize(
    "call",
    [lambda: verifier_reward(0.5, 1.5), lambda: verifier_reward(0.5, 1.0, -0.1), lambda: meta_verifier_reward(1.0, 2.0),
     lambda: generator_reward(True, 1.1, 1.0, 1.0), lambda: generator_reward(True, 1.0, 1.0, 1.0, alpha=-1.0),
     lambda: verifier_reward(True, 1.0)],  # type: ignore[arg-type]
)
def test_out_of_range_inputs_are_refused(call) -> None:
    with pytest.raises(ValueError):
        call()
