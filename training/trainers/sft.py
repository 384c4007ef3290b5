"""Supervised cold start on TRL's ``SFTTrainer``: teach the output formats before RL.

A 135M model rarely writes a parsable verdict on its own, and GRPO learns nothing from a
group whose rewards are all equal, so RL configs may start from the ``final/`` model of
this run. The examples are built from graded proofs (``training.role_data.records.sft_records``)
or, in the loop, from rejection sampling; the loss covers the assistant answer only. The
run directory is ``training.trainers.setup``'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from data.errors import InputError
from training.config import TrainConfig
from training.processes import per_process
from training.trainers.setup import common_arguments, finish, lora_config, metrics_callback, model_location, resume, save_final


def run_sft(config: TrainConfig, records: list[dict[str, Any]]) -> Path:
    """Fine-tune on prompt/completion ``records``; returns the final model directory."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    args = SFTConfig(
        **common_arguments(config, config.sft.save_steps),
        per_device_train_batch_size=per_process(config.sft.batch_size, "sft.batch_size"),
        learning_rate=config.sft.learning_rate,
        max_steps=config.sft.max_steps,
        max_length=config.sft.max_length,
    )
    trainer = SFTTrainer(
        model=location, args=args, train_dataset=Dataset.from_list(records), processing_class=tokenizer,
        peft_config=lora_config(config), callbacks=[metrics_callback(config)],
    )
    if len(trainer.train_dataset) == 0:
        raise InputError(f"no SFT example keeps any of its answer within sft.max_length={config.sft.max_length} tokens")
    resume(trainer, config, "train sft")
    save_final(trainer, tokenizer, Path(config.run_dir) / "final")
    return finish(config, "SFT cold start")
