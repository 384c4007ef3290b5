"""``train sft``'s trainer arguments (precision, batch order) and the windowed length grouping. No timing here."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from data.errors import InputError
from proofsmith.config import resolve_config
from training.config import TrainConfig
from training.trainers.batching import LengthGroupedSampler, grouped_order, length_grouped, random_order
from training.trainers.sft import sft_arguments, sft_precision


def sft_config(tmp_path: Any, *assignments: str) -> TrainConfig:
    return resolve_config(None, None, [f"run_dir={tmp_path / 'run'}", *assignments], root=TrainConfig)


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A CPU machine (no GPU) whose bf16 support each test sets."""
    import training.world_model.trainer as world_trainer

    monkeypatch.setattr(world_trainer, "cuda_available", lambda: False)

    def native_bf16(value: bool) -> None:
        monkeypatch.setattr(world_trainer, "cpu_has_native_bf16", lambda: value)

    return native_bf16


@pytest.mark.parametrize("precision, native, bf16", [
    ("auto", True, True), ("auto", False, False), ("bf16", False, True), ("fp32", True, False),
])
def test_sft_trains_in_bf16_where_asked_or_native_and_says_the_fp32_fallback(tmp_path: Any, cpu: Any, precision: str,
                                                                            native: bool, bf16: bool) -> None:
    cpu(native)
    config = sft_config(tmp_path, f"sft.precision={precision}")
    assert sft_arguments(config)["bf16"] is bf16
    chosen, reason = sft_precision(config)
    assert chosen is bf16
    if precision == "auto" and not native:
        assert reason.startswith("fp32") and "native bf16" in reason


def test_sft_groups_batches_by_length_unless_told_not_to(tmp_path: Any, cpu: Any) -> None:
    cpu(True)
    assert sft_arguments(sft_config(tmp_path))["train_sampling_strategy"] == "group_by_length"
    assert sft_arguments(sft_config(tmp_path, "sft.group_by_length=false"))["train_sampling_strategy"] == "random"
    arguments = sft_arguments(sft_config(tmp_path, "sft.batch_size=4", "sft.max_steps=7"))
    assert (arguments["per_device_train_batch_size"], arguments["max_steps"], arguments["use_cpu"]) == (4, 7, True)


def test_an_unknown_precision_is_a_config_error(tmp_path: Any) -> None:
    with pytest.raises((InputError, ValueError), match="precision"):
        sft_config(tmp_path, "sft.precision=fp16")


def test_grouping_keeps_each_window_of_the_random_order_and_pads_less() -> None:
    lengths = [(index * 37) % 101 + 5 for index in range(70)]
    batch, window = 4, 3
    plain, grouped = random_order(len(lengths), 5), grouped_order(lengths, batch, 5, window)
    assert sorted(grouped) == list(range(len(lengths)))
    span = batch * window
    for start in range(0, len(lengths), span):  # the same examples per window, only regrouped
        assert sorted(grouped[start:start + span]) == sorted(plain[start:start + span])

    def padding(order: list[int]) -> float:
        batches = [order[at:at + batch] for at in range(0, len(order), batch)]
        real = sum(lengths[index] for one in batches for index in one)
        return 1 - real / sum(max(lengths[index] for index in one) * len(one) for one in batches)

    assert padding(grouped) < 0.75 * padding(plain)
    assert grouped_order(lengths, batch, 5, window) == grouped  # seeded
    last = plain[len(lengths) // span * span:]  # the last window: two whole batches, then the partial one of its shortest
    assert sorted(grouped[-2:]) == sorted(sorted(last, key=lambda index: lengths[index])[:2])


def test_a_sampler_draws_a_new_order_each_epoch_and_the_same_one_when_set_back() -> None:
    sampler = LengthGroupedSampler([3, 9, 1, 7, 5, 2, 8, 4], batch_size=2, seed=0, window=2)
    first, second = list(sampler), list(sampler)
    assert len(sampler) == 8 and first != second
    sampler.set_epoch(0)
    assert list(sampler) == first


def test_only_the_group_by_length_strategy_gets_the_windowed_sampler() -> None:
    class Base:  # the seam: transformers' Trainer as far as sampling goes
        def __init__(self, strategy: str) -> None:
            self.args = SimpleNamespace(train_sampling_strategy=strategy, data_seed=None, seed=3, train_batch_size=2,
                                        gradient_accumulation_steps=1, world_size=2, length_column_name="length")
            self.train_dataset: Any = None

        def _get_train_sampler(self, train_dataset: Any = None) -> str:
            return "random"

    class Rows(list):
        column_names = ["input_ids", "length"]

        def __getitem__(self, key: Any) -> Any:
            return [row[key] for row in self] if isinstance(key, str) else super().__getitem__(key)

    trainer_class = length_grouped(Base)
    assert trainer_class("random")._get_train_sampler() == "random"
    grouped = trainer_class("group_by_length")
    grouped.train_dataset = Rows([{"input_ids": [0] * size, "length": size} for size in (5, 1, 4, 2)])
    sampler = grouped._get_train_sampler()
    assert isinstance(sampler, LengthGroupedSampler) and sampler.lengths == [5, 1, 4, 2] and sampler.seed == 3
    assert sampler.batch_size == 4  # a step's examples over both processes: each takes a slice of what one would
