"""The decision weights: exactly each worked step's right side and verdict word, and a loss that is the model's own at
weight 1 and the weighted mean otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.world.proofs import world_proofs
from data.world.work import COMPARED_SIDES
from training.role_data.answers import verifier_answer
from training.role_data.world_critiques import worked_analysis
from training.world_model.config import DECISION_PARTS, WorldTrainingSettings
from training.world_model.decision import decision_spans, token_weights, weighted_answer_ids, weighted_loss
from training.world_model.tokenizer import answer_ids, load_tokenizer
from training.world_model.trainer import IGNORED, PaddedBatch, tokenized

ANALYSIS = ("Step 1: (a+b)^2 = a^2+2*a*b+b^2. Expanded, the left side is a^2+2*a*b+b^2 and the right side is a^2+2*a*b+b^2. "
            "They agree, so Step 1 is correct.\n"
            "Step 2: (a-b)^2 = a^2-b^2. Expanded, the left side is a^2-2*a*b+b^2 and the right side is a^2-b^2. "
            "They differ, so Step 2 is wrong.")


@pytest.fixture(scope="module")
def tokenizer(tiny_world_model: str):
    return load_tokenizer(Path(tiny_world_model))


def test_the_spans_are_each_worked_steps_right_side_and_verdict_word() -> None:
    assert [ANALYSIS[start:end] for start, end in decision_spans(ANALYSIS)] == ["a^2+2*a*b+b^2", "agree", "a^2-b^2", "differ"]
    assert decision_spans("The proof never states its claim, so it proves nothing.") == []
    assert [ANALYSIS[start:end] for start, end in decision_spans(ANALYSIS, ["verdict"])] == ["agree", "differ"]
    assert set(DECISION_PARTS) == set(COMPARED_SIDES.groupindex)  # every part is a group the pattern names


def test_flawed_right_is_the_right_side_of_a_step_that_differs_and_never_a_drill_line() -> None:
    assert [ANALYSIS[start:end] for start, end in decision_spans(ANALYSIS, ["flawed_right"])] == ["a^2-b^2"]
    assert [ANALYSIS[start:end] for start, end in decision_spans(ANALYSIS, ["verdict", "flawed_right"])] == [
        "agree", "a^2-b^2", "differ"]
    drill = "Expanded, the left side is 53 and the right side is 106. They differ.\n"
    assert decision_spans(drill, ["flawed_right"]) == [] and len(decision_spans(drill, ["right"])) == 1


def test_a_token_is_weighted_when_it_overlaps_a_span() -> None:
    assert token_weights([(0, 3), (3, 6), (6, 9), (9, 12)], [(4, 5), (8, 10)], 5.0) == [1.0, 5.0, 5.0, 5.0]
    assert token_weights([(0, 4), (4, 8)], [(4, 6)], 3.0) == [1.0, 3.0]  # touching at 4 is not overlapping


def test_the_weighted_tokens_of_a_real_answer_cover_exactly_the_decisions(tokenizer) -> None:
    answer = verifier_answer(0.0, ANALYSIS)
    ids, weights = weighted_answer_ids(tokenizer, answer, 5.0)
    assert ids == answer_ids(tokenizer, answer)  # the ids the plain loss trains on
    assert len(weights) == len(ids) and weights[-1] == 1.0  # the end token
    offsets = tokenizer(answer, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    weighted = {index for index, weight in enumerate(weights[:-1]) if weight == 5.0}
    spans = decision_spans(answer)
    for start, end in spans:  # every character of a span lies in a weighted token
        assert all(any(offsets[index][0] <= char < offsets[index][1] for index in weighted) for char in range(start, end))
    for index in weighted:  # and every weighted token touches a span
        assert any(offsets[index][0] < end and start < offsets[index][1] for start, end in spans)
    text = "".join(tokenizer.decode([ids[index]]) for index in sorted(weighted))
    assert text.replace(" ", "") == "a^2+2*a*b+b^2agreea^2-b^2differ"
    same, verdicts = weighted_answer_ids(tokenizer, answer, 5.0, ["verdict"])
    assert same == ids and "".join(tokenizer.decode([ids[index]]) for index, weight in enumerate(verdicts)
                                   if weight == 5.0).replace(" ", "") == "agreediffer"


def test_rows_carry_weights_only_when_the_weight_is_not_1(tokenizer) -> None:
    proof = next(proof for proof in world_proofs(0, 2, families=("identity",)) if proof.score == 0)
    example = {"prompt": [{"role": "user", "content": proof.proof}], "answer": verifier_answer(0.0, worked_analysis(proof))}
    (plain,), _ = tokenized([example], tokenizer, 1024)
    (weighted,), _ = tokenized([example], tokenizer, 1024, decision_weight=5.0)
    assert "weights" not in plain and plain["input_ids"] == weighted["input_ids"] and plain["labels"] == weighted["labels"]
    prompt = sum(label == IGNORED for label in weighted["labels"])
    assert weighted["weights"][:prompt] == [0.0] * prompt and 5.0 in weighted["weights"][prompt:]
    batch = PaddedBatch(pad_id=0, multiple=64)([weighted, {key: value for key, value in weighted.items()}])
    assert batch["weights"].shape == batch["input_ids"].shape and float(batch["weights"][0, len(weighted["weights"]):].sum()) == 0


def test_at_weight_1_the_loss_is_the_models_own_and_otherwise_the_weighted_mean(tiny_world_model: str, tokenizer) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_world_model)
    answers = [verifier_answer(0.0, ANALYSIS), verifier_answer(1.0, ANALYSIS.split("\n")[0])]
    examples = [{"prompt": [{"role": "user", "content": "Check the proof."}], "answer": answer} for answer in answers]
    rows, _ = tokenized(examples, tokenizer, 1024, decision_weight=4.0)
    batch = PaddedBatch(tokenizer.pad_token_id, 64)(rows)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        own = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss
        ones = (batch["weights"] > 0).float()
        assert torch.allclose(weighted_loss(logits, batch["labels"], ones), own, atol=1e-5)
        per_token = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)),
                                                      batch["labels"][:, 1:].reshape(-1), reduction="none",
                                                      ignore_index=IGNORED).view(len(rows), -1)
        weights = batch["weights"][:, 1:]
        expected = (per_token * weights).sum() / weights.sum()
        assert torch.allclose(weighted_loss(logits, batch["labels"], batch["weights"]), expected, atol=1e-5)
        assert not torch.allclose(expected, own, atol=1e-3)  # the weighting changes it


def test_a_weight_must_be_positive_and_its_parts_known() -> None:
    with pytest.raises(ValueError, match="decision_weight"):
        WorldTrainingSettings(decision_weight=0)
    for parts in ([], ["left"], ["verdict", "claim"]):
        with pytest.raises(ValueError, match="decision_parts must name some of right, verdict"):
            WorldTrainingSettings(decision_parts=parts)
