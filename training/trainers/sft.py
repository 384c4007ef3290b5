"""Supervised cold start on TRL's ``SFTTrainer``: teach the output formats before RL.

A 135M model rarely writes a parsable verdict on its own, and GRPO learns nothing from a
group whose rewards are all equal, so RL configs may start from the ``final/`` model of
this run. The examples are built from graded proofs (``training.role_data.records.sft_records``)
or, in the loop, from rejection sampling; the loss covers the assistant answer only. The
run directory is ``training.trainers.setup``'s.

Speed (``benchmarks/sft_speed.py``): bf16 autocast where the CPU multiplies bf16 natively
(``sft.precision``; weights and optimizer stay float32, the fp32 fallback is logged) and
batches grouped by length window by window (``sft.group_by_length``, ``training.trainers.batching``).
TRL's ``padding_free`` is left off (not measured): it needs ``max_length=None`` unless packing, and
without FlashAttention (CPU) transformers runs the flattened batch as one sequence under a
block-diagonal mask, whose attention grows with the square of the whole batch's length (for 8
examples of ~680 tokens, ~8x the padded batch's attention work, more than all its weight matmuls).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from data.errors import InputError
from training.config import TrainConfig
from training.processes import per_process
from training.trainers.setup import common_arguments, finish, lora_config, metrics_callback, model_location, resume, save_final

log = logging.getLogger(__name__)


def sft_precision(config: TrainConfig) -> tuple[bool, str]:
    """(whether to train under bf16 autocast, why), from ``sft.precision``."""
    from training.world_model.trainer import precision_choice

    return precision_choice(config.sft.precision)


def sft_arguments(config: TrainConfig) -> dict[str, Any]:
    """``SFTConfig``'s keyword arguments: the ones every trainer shares, then the cold start's own."""
    return {
        **common_arguments(config, config.sft.save_steps),
        "bf16": sft_precision(config)[0],
        "train_sampling_strategy": "group_by_length" if config.sft.group_by_length else "random",
        "per_device_train_batch_size": per_process(config.sft.batch_size, "sft.batch_size"),
        "learning_rate": config.sft.learning_rate,
        "max_steps": config.sft.max_steps,
        "max_length": config.sft.max_length,
    }


def sft_trainer(config: TrainConfig, records: list[dict[str, Any]], tokenizer: Any, location: str, **overrides: Any) -> Any:
    """The ``SFTTrainer`` of ``config`` on prompt/completion ``records`` (``overrides``: SFTConfig fields, for benchmarks)."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from training.trainers.batching import length_grouped

    bf16, reason = sft_precision(config)
    (log.info if bf16 else log.warning)("train sft precision: %s", reason)
    return length_grouped(SFTTrainer)(
        model=location, args=SFTConfig(**{**sft_arguments(config), **overrides}), train_dataset=Dataset.from_list(records),
        processing_class=tokenizer, peft_config=lora_config(config), callbacks=[metrics_callback(config)],
    )


def run_sft(config: TrainConfig, records: list[dict[str, Any]]) -> Path:
    """Fine-tune on prompt/completion ``records``; returns the final model directory."""
    from transformers import AutoTokenizer

    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    trainer = sft_trainer(config, records, tokenizer, location)
    if len(trainer.train_dataset) == 0:
        raise InputError(f"no SFT example keeps any of its answer within sft.max_length={config.sft.max_length} tokens")
    resume(trainer, config, "train sft")
    save_final(trainer, tokenizer, Path(config.run_dir) / "final", config.prompts_dir)
    return finish(config, "SFT cold start")
