"""Supervised cold start on TRL's ``SFTTrainer``: teach the output formats before RL.

A 135M model rarely writes a parsable verdict on its own, and GRPO learns nothing from a
group whose rewards are all equal, so RL configs may start from the ``final/`` model of
this run. The examples are built from graded proofs (``training.role_data.records.sft_records``)
or, in the loop, from rejection sampling; the loss covers the assistant answer only. Same run directory layout as ``training.trainers.grpo``.
"""

from __future__ import annotations

import os
from pathlib import Path

from typing import Any

from data.errors import InputError
from training.trainers.grpo import last_checkpoint, model_location, save_final
from training.trainers.metrics import MetricsFile, plot_rewards
from training.config import TrainConfig, mark_complete


def run_sft(config: TrainConfig, records: list[dict[str, Any]]) -> Path:
    """Fine-tune on prompt/completion ``records`` (``training.role_data.records.sft_records``); returns the final model directory."""
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    run_dir = Path(config.run_dir)
    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    on_gpu = torch.cuda.is_available()
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(run_dir / "tensorboard")
    args = SFTConfig(
        output_dir=str(run_dir / "checkpoints"),
        per_device_train_batch_size=config.sft.batch_size,
        learning_rate=config.sft.learning_rate,
        max_steps=config.sft.max_steps,
        max_length=config.sft.max_length,
        logging_steps=1,
        save_steps=config.sft.save_steps,
        save_total_limit=2,
        report_to=["tensorboard"],
        seed=config.grpo.seed,
        use_cpu=not on_gpu,
        bf16=config.model.bf16 and on_gpu,
        gradient_checkpointing=config.model.gradient_checkpointing,
        dataloader_num_workers=0,
    )
    peft_config = None
    if config.model.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=config.model.lora_rank, lora_alpha=config.model.lora_alpha,
                                 target_modules=list(config.model.lora_target_modules), task_type="CAUSAL_LM")
    trainer = SFTTrainer(
        model=location, args=args, train_dataset=Dataset.from_list(records), processing_class=tokenizer,
        peft_config=peft_config, callbacks=[MetricsFile(run_dir / "metrics.jsonl")],
    )
    if len(trainer.train_dataset) == 0:
        raise InputError(f"no SFT example keeps any of its answer within sft.max_length={config.sft.max_length} tokens")
    trainer.train(resume_from_checkpoint=last_checkpoint(run_dir / "checkpoints"))
    final = run_dir / "final"
    save_final(trainer, tokenizer, final)
    plot_rewards(run_dir / "metrics.jsonl", run_dir / "rewards.png", f"SFT cold start: {config.model.name}")
    mark_complete(run_dir)
    return final
