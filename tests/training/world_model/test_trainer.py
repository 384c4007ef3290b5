"""The world model's batches: padded on the right to a multiple of a few shapes, padding never trained on."""

from __future__ import annotations

from training.world_model.trainer import IGNORED, PaddedBatch


def features(*lengths: int) -> list[dict[str, list[int]]]:
    return [{"input_ids": list(range(1, length + 1)), "labels": [IGNORED] + list(range(2, length + 1))} for length in lengths]


def test_a_batch_is_padded_to_its_longest_example_rounded_up_to_the_multiple() -> None:
    batch = PaddedBatch(pad_id=0, multiple=8)(features(3, 9))
    assert batch["input_ids"].shape == (2, 16)
    assert batch["input_ids"][0].tolist() == [1, 2, 3] + [0] * 13
    assert batch["labels"][0].tolist() == [IGNORED, 2, 3] + [IGNORED] * 13
    assert batch["attention_mask"].sum(dim=1).tolist() == [3, 9]


def test_a_length_on_the_multiple_and_a_multiple_of_one_add_no_padding() -> None:
    assert PaddedBatch(pad_id=0, multiple=8)(features(8, 5))["input_ids"].shape == (2, 8)
    assert PaddedBatch(pad_id=0)(features(3, 9))["input_ids"].shape == (2, 9)


def test_batches_of_many_lengths_take_few_shapes() -> None:
    collate = PaddedBatch(pad_id=0, multiple=64)
    shapes = {collate(features(length, max(1, length - 7)))["input_ids"].shape[1] for length in range(1, 700)}
    assert shapes == {64 * k for k in range(1, 12)}
