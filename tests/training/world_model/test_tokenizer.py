"""The world tokenizer: byte-for-byte round trips, digits one by one, and the chat template engines send."""

from __future__ import annotations

import json

import pytest

from data.world.config import FAMILIES, WorldConfig
from data.world.splits import make_splits
from training.role_data.world_rows import world_rows
from training.world_model.config import ExampleSettings
from training.world_model.examples import example_text, world_examples
from training.world_model.tokenizer import END, answer_ids, prompt_ids, train_tokenizer


@pytest.fixture(scope="module")
def world_texts() -> list[str]:
    """Every text a world of every family writes: problems, proofs, critiques, rated analyses, assessments, examples."""
    splits = make_splits(WorldConfig(problems_per_template=1, test_problems_per_template=1, families=list(FAMILIES)))
    texts: list[str] = []
    for split in splits.values():
        proof_rows, meta_rows = world_rows(split.proofs, seed=0)
        for row in proof_rows + meta_rows:
            texts.extend(str(value) for value in row.values() if isinstance(value, str))
        texts.extend(example_text(example) for example in world_examples(split.proofs, ExampleSettings(), world_seed=0))
    return texts


@pytest.fixture(scope="module")
def tokenizer(world_texts: list[str]) -> object:
    # trained on a quarter of the texts: the rest (other families among them) must round-trip too
    return train_tokenizer(world_texts[::4], vocab_size=600, min_frequency=2)


def test_every_world_text_round_trips_byte_for_byte(tokenizer, world_texts: list[str]) -> None:
    unusual = ["x ≥ 0 · 2·(n + 1) — ü ∑ 😀", "  two  spaces\tand a tab\n\nand lines ", "\\boxed{0.5}", "1234567890"]
    for text in world_texts + unusual:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.decode(ids) == text


def test_digits_are_tokens_of_their_own(tokenizer) -> None:
    tokens = tokenizer.convert_ids_to_tokens(tokenizer("x^2 + 127x = 1270", add_special_tokens=False)["input_ids"])
    assert [token for token in tokens if any(character.isdigit() for character in token)] == \
        ["2", "1", "2", "7", "1", "2", "7", "0"]


def test_prompt_and_answer_ids_are_the_chat_template_engines_render(tokenizer) -> None:
    messages = [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Grade: Step 1: 2 = 2."}]
    prompt = prompt_ids(tokenizer, messages)
    assert tokenizer.decode(prompt) == "<|system|>\nBe strict.<|end|>\n<|user|>\nGrade: Step 1: 2 = 2.<|end|>\n<|assistant|>\n"
    answer = answer_ids(tokenizer, "Here is my evaluation of the solution:\nfine")
    assert answer[-1] == tokenizer.convert_tokens_to_ids(END) == tokenizer.eos_token_id
    whole = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": "Here is my evaluation of the solution:\nfine"}],
                                          tokenize=False)
    assert tokenizer.decode(prompt + answer) == whole.rstrip("\n")
    assert json.loads(tokenizer.backend_tokenizer.to_str())["pre_tokenizer"]["type"] == "Sequence"
