"""Train the world model, from scratch or on from ``init_model``: tokenize the examples, batch them by length, run ``Trainer``.

No TRL here: teaching a fresh model prompts and answers needs only a causal LM loss on the
answer (the prompt's labels are -100). The run directory follows the trainers' layout
(``training.trainers.setup``): ``checkpoints/`` (a rerun resumes from the last whole one),
``tensorboard/``, ``metrics.jsonl``, ``final/``; besides, ``sessions.jsonl`` records each
process that trained (steps, seconds, tokens), from which the summary's cost is summed.

``training.decision_weight`` above 1 weights the tokens where a worked analysis decides (``decision.py``).

Logged every ``logging_steps``: loss, learning rate, ``tokens_per_second`` (answer and prompt
tokens, padding excluded), ``padding_fraction`` (padded positions / all positions) and
``num_input_tokens_seen``. Precision: bf16 autocast where the device has native bf16 matmuls,
else fp32, and the log says which and why.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.jsonl import JsonlWriter, read_jsonl
from engine.devices import cpu_has_native_bf16, cuda_available
from training.trainers.metrics import MetricsFile, plot_rewards
from training.trainers.progress import show_training_progress
from training.trainers.setup import checkpoint_step, last_checkpoint
from training.world_model.architecture import continued_model, new_model, parameter_count
from training.world_model.config import DECISION_PARTS, WorldModelConfig
from training.world_model.decision import weighted_answer_ids, weighted_loss
from training.world_model.tokenizer import answer_ids, prompt_ids

log = logging.getLogger(__name__)
IGNORED = -100


def precision_choice(requested: str) -> tuple[bool, str]:
    """(whether to train under bf16 autocast, the reason, for the log and the summary)."""
    if requested != "auto":
        return requested == "bf16", f"{requested} (asked)"
    if cuda_available():
        return True, "bf16 autocast (GPU)"
    if cpu_has_native_bf16():
        return True, "bf16 autocast (the CPU has native bf16 matmuls)"
    return False, "fp32: this CPU has no native bf16 matmuls (AMX-BF16 or AVX512-BF16), so bf16 autocast would be slower"


def tokenized(examples: Sequence[dict[str, Any]], tokenizer: Any, max_length: int, decision_weight: float = 1.0,
              decision_parts: Sequence[str] = DECISION_PARTS) -> tuple[list[dict[str, Any]], int]:
    """(rows with input_ids, labels and length, how many examples were longer than ``max_length`` and left out).

    Rows carry per-token loss ``weights`` (prompt 0) when ``decision_weight`` is not 1 (``decision.py``); at 1 they
    carry none and the loss is the model's own."""
    rows, too_long = [], 0
    for example in examples:
        prompt = prompt_ids(tokenizer, example["prompt"])
        weights: list[float] = []
        if decision_weight == 1.0:
            answer = answer_ids(tokenizer, example["answer"])
        else:
            answer, weights = weighted_answer_ids(tokenizer, example["answer"], decision_weight, decision_parts)
        if len(prompt) + len(answer) > max_length:
            too_long += 1
            continue
        row = {"input_ids": prompt + answer, "labels": [IGNORED] * len(prompt) + answer, "length": len(prompt) + len(answer)}
        if weights:
            row["weights"] = [0.0] * len(prompt) + weights
        rows.append(row)
    return rows, too_long


class PaddedBatch:
    """Pads a batch on the right (padded labels are ignored) to its longest example, rounded up to ``multiple``.

    Why round up: on the CPU, memory grew with every new batch shape and was never given back
    (+3.5 to +16 MB a step with a shape per batch, an out-of-memory kill at step 838 of the
    levels 1-2 run; flat over 60 steps with multiples of 64, at the same speed), so a run
    must see a few shapes, not one per batch.
    """

    def __init__(self, pad_id: int, multiple: int = 1) -> None:
        self.pad_id, self.multiple = pad_id, multiple

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        longest = max(len(feature["input_ids"]) for feature in features)
        longest = -(-longest // self.multiple) * self.multiple
        ids, labels, mask, weights = [], [], [], []
        for feature in features:
            gap = longest - len(feature["input_ids"])
            ids.append(feature["input_ids"] + [self.pad_id] * gap)
            labels.append(feature["labels"] + [IGNORED] * gap)
            mask.append([1] * len(feature["input_ids"]) + [0] * gap)
            if "weights" in feature:
                weights.append(feature["weights"] + [0.0] * gap)
        batch = {"input_ids": torch.tensor(ids), "labels": torch.tensor(labels), "attention_mask": torch.tensor(mask)}
        if weights:
            batch["weights"] = torch.tensor(weights)
        return batch


def make_trainer_class() -> type:
    """A ``Trainer`` that counts the tokens it trains on and adds throughput and padding to every log; a batch with
    ``weights`` is trained on the weighted loss of ``decision.py``."""
    from transformers import Trainer

    class CountingTrainer(Trainer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.tokens = self.positions = 0
            self.window_tokens = self.window_positions = 0
            self.window_start = time.perf_counter()

        def compute_loss(self, model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            mask = inputs["attention_mask"]
            real, positions = int(mask.sum()), int(mask.numel())
            self.tokens += real
            self.positions += positions
            self.window_tokens += real
            self.window_positions += positions
            if "weights" not in inputs:
                return super().compute_loss(model, inputs, *args, **kwargs)
            weights = inputs.pop("weights")
            outputs = model(input_ids=inputs["input_ids"], attention_mask=mask)
            loss = weighted_loss(outputs.logits, inputs["labels"], weights)
            return_outputs = kwargs.get("return_outputs", args[0] if args else False)
            return (loss, outputs) if return_outputs else loss

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if "loss" in logs and self.window_positions:
                now = time.perf_counter()
                logs["tokens_per_second"] = round(self.window_tokens / max(now - self.window_start, 1e-9), 1)
                logs["padding_fraction"] = round(1 - self.window_tokens / self.window_positions, 4)
                self.window_tokens = self.window_positions = 0
                self.window_start = now
            super().log(logs, start_time)

    return CountingTrainer


def training_arguments(config: WorldModelConfig, run_dir: Path, bf16: bool) -> Any:
    from transformers import TrainingArguments

    settings = config.training
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(run_dir / "tensorboard")
    return TrainingArguments(
        output_dir=str(run_dir / "checkpoints"), max_steps=settings.max_steps, per_device_train_batch_size=settings.batch_size,
        learning_rate=settings.learning_rate, lr_scheduler_type="cosine_with_min_lr", lr_scheduler_kwargs={"min_lr_rate": 0.1},
        warmup_steps=settings.warmup_steps, weight_decay=settings.weight_decay, adam_beta2=0.98, max_grad_norm=1.0,
        logging_steps=settings.logging_steps, save_steps=settings.save_steps, save_total_limit=2, report_to=["tensorboard"],
        seed=settings.seed, data_seed=settings.seed, use_cpu=not cuda_available(), bf16=bf16,
        train_sampling_strategy="group_by_length" if settings.group_by_length else "random",
        include_num_input_tokens_seen="non_padding", dataloader_num_workers=0, remove_unused_columns=False,
        disable_tqdm=True,
    )


def train_world_model(config: WorldModelConfig, rows: list[dict[str, Any]], tokenizer: Any, run_dir: Path,
                      init: Path | None = None) -> Path:
    """Train on tokenized ``rows`` in ``run_dir`` (resuming), from fresh weights or those of the checkpoint ``init``;
    save ``final/`` with the tokenizer and prompts; returns it."""
    from datasets import Dataset

    bf16, reason = precision_choice(config.training.precision)
    (log.info if bf16 else log.warning)("world model precision: %s", reason)
    model = continued_model(init) if init is not None else new_model(config.architecture, tokenizer, config.training.seed)
    trainer = make_trainer_class()(
        model=model, args=training_arguments(config, run_dir, bf16), train_dataset=Dataset.from_list(rows),
        data_collator=PaddedBatch(tokenizer.pad_token_id, config.training.pad_to_multiple_of),
        callbacks=[MetricsFile(run_dir / "metrics.jsonl")],
    )
    show_training_progress(trainer, "world model")
    checkpoint = last_checkpoint(run_dir / "checkpoints")
    first_step = checkpoint_step(checkpoint) if checkpoint else 0
    if checkpoint and first_step >= config.training.max_steps:
        # training ended but the run did not (killed before its summary): transformers, resumed from the last
        # checkpoint, would train one step past max_steps, so the trained weights are taken as they are
        trained = continued_model(Path(checkpoint))
    else:
        started = time.perf_counter()
        trainer.train(resume_from_checkpoint=checkpoint)
        trained = trainer.model
        with JsonlWriter(run_dir / "sessions.jsonl") as writer:
            writer.write({"first_step": first_step, "last_step": trainer.state.global_step,
                          "seconds": round(time.perf_counter() - started, 2), "tokens": trainer.tokens,
                          "positions": trainer.positions, "precision": reason, "parameters": parameter_count(model)})
    final = run_dir / "final"
    final.mkdir(parents=True, exist_ok=True)
    trained.save_pretrained(str(final), safe_serialization=True)
    tokenizer.save_pretrained(str(final))
    plot_rewards(run_dir / "metrics.jsonl", run_dir / "training.png", "world model")
    return final


def copy_prompts(prompts: Path, final: Path) -> None:
    """The prompt set the model learned, beside it (``--prompts MODEL/prompts``)."""
    target = final / "prompts"
    target.mkdir(parents=True, exist_ok=True)
    for template in sorted(prompts.glob("*.md")):
        shutil.copyfile(template, target / template.name)


def cost(run_dir: Path) -> dict[str, Any]:
    """Training cost summed over the sessions that finished: steps (the last, and those timed), seconds, tokens,
    tokens/s, padding share."""
    sessions = read_jsonl(run_dir / "sessions.jsonl") if (run_dir / "sessions.jsonl").exists() else []
    seconds = sum(session["seconds"] for session in sessions)
    tokens = sum(session["tokens"] for session in sessions)
    positions = sum(session["positions"] for session in sessions)
    return {
        "sessions": len(sessions), "steps": sessions[-1]["last_step"] if sessions else 0,
        # the steps the timed sessions ran (one redone after a kill counts again); a killed session wrote no line,
        # so its steps are trained but not timed
        "timed_steps": sum(session["last_step"] - session["first_step"] for session in sessions),
        "minutes": round(seconds / 60, 2), "trained_tokens": tokens,
        "tokens_per_second": round(tokens / seconds, 1) if seconds else None,
        "padding_fraction": round(1 - tokens / positions, 4) if positions else None,
        "precision": sessions[-1]["precision"] if sessions else None,
        "parameters": sessions[-1]["parameters"] if sessions else None,
    }
