"""What every trainer run shares: the model to start from, LoRA, the TRL arguments common to
GRPO, SFT and async GRPO, the prompts that fit, resuming, and how a run ends.

Run directory layout (``config.run_dir``), the same for every trainer:

    config.toml        the resolved config (written by the command before anything loads)
    checkpoints/       TRL checkpoints every ``save_steps``; a rerun resumes from the last
    tensorboard/       TensorBoard event files (TRL's metrics and every reward component)
    metrics.jsonl      the same metrics, one line per step
    rewards.png        reward curves, redrawn at the end
    final/             the trained model (LoRA merged), loadable with ``--model RUN/final``
    COMPLETE           written last: the stage is done (``train loop`` skips it on rerun)

On CPU the GRPO trainers run in float32 with ``use_cpu``; bf16 only on a GPU when ``model.bf16``.
SFT sets its own precision on top (``sft.precision``: bf16 autocast also on CPUs with native bf16).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from data.errors import InputError
from engine.model_store import PROMPTS_FOLDER
from training.config import TrainConfig, mark_complete
from training.processes import is_main_process, wait_for_everyone
from training.role_data.records import grpo_records
from training.role_data.rows import TrainingRow
from training.trainers.metrics import MetricsFile, plot_rewards
from training.trainers.progress import show_training_progress


def model_location(name: str) -> str:
    """A local checkpoint directory for ``model.name`` (the embedded GGUF is converted once and cached)."""
    from engine.model_store import ensure_checkpoint

    return ensure_checkpoint(name).path


def lora_config(config: TrainConfig) -> Any:
    """The peft ``LoraConfig`` of ``[model]``, or None for full fine-tuning."""
    if not config.model.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(r=config.model.lora_rank, lora_alpha=config.model.lora_alpha,
                      target_modules=list(config.model.lora_target_modules), task_type="CAUSAL_LM")


def common_arguments(config: TrainConfig, save_steps: int) -> dict[str, Any]:
    """Keyword arguments every TRL config of ours takes alike (GRPOConfig, SFTConfig, AsyncGRPOConfig).

    Also points TRL's TensorBoard writer at ``RUN/tensorboard``.
    """
    import torch

    run_dir = Path(config.run_dir)
    on_gpu = torch.cuda.is_available()
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(run_dir / "tensorboard")
    return {
        "output_dir": str(run_dir / "checkpoints"),
        "logging_steps": 1,
        "save_steps": save_steps,
        "save_total_limit": 2,
        "report_to": ["tensorboard"],
        "seed": config.grpo.seed,
        "use_cpu": not on_gpu,
        "bf16": config.model.bf16 and on_gpu,
        "gradient_checkpointing": config.model.gradient_checkpointing,
        "dataloader_num_workers": 0,
        # The rate decays linearly to 0 over max_steps in every trainer, as GRPOConfig's and SFTConfig's default:
        # AsyncGRPOConfig defaults to a constant rate, which gave world-model verifier GRPO twice the mean rate of
        # the same run on GRPOTrainer, and its result with it (docs/results/world-model-verifier-rl.md).
        "lr_scheduler_type": "linear",
    }


def metrics_callback(config: TrainConfig) -> MetricsFile:
    return MetricsFile(Path(config.run_dir) / "metrics.jsonl")


def fitting_records(records: list[dict[str, Any]], tokenizer: Any, limit: int) -> list[dict[str, Any]]:
    """Drop prompts longer than ``limit`` tokens (they would be cut by TRL or overflow the context)."""
    kept = []
    for record in records:
        ids = tokenizer.apply_chat_template(record["prompt"], add_generation_prompt=True, tokenize=True)
        length = len(ids["input_ids"] if hasattr(ids, "keys") else ids)
        if length <= limit:
            kept.append(record)
    return kept


def grpo_dataset_records(role: str, config: TrainConfig, rows: list[TrainingRow], tokenizer: Any) -> list[dict[str, Any]]:
    """The role's GRPO records whose prompts fit ``grpo.max_prompt_tokens``; none fitting is an input error."""
    limit = config.grpo.max_prompt_tokens
    records = fitting_records(grpo_records(role, rows, config.prompts_dir or None), tokenizer, limit)
    if not records:
        raise InputError(f"every training prompt is longer than grpo.max_prompt_tokens={limit}")
    return records


CHECKPOINT_WRITTEN_LAST = "trainer_state.json"
"""transformers writes a checkpoint's trainer state after its weights, optimizer and RNG states."""


def last_checkpoint(directory: Path) -> str | None:
    """The newest whole checkpoint under ``directory``; one a kill cut off mid-save (no trainer state yet)
    is passed over, where transformers' own ``get_last_checkpoint`` would pick it and fail to load it."""
    if not directory.is_dir():
        return None
    whole = [path for path in directory.glob("checkpoint-*")
             if path.name.removeprefix("checkpoint-").isdigit() and (path / CHECKPOINT_WRITTEN_LAST).is_file()]
    return str(max(whole, key=lambda path: int(path.name.removeprefix("checkpoint-")))) if whole else None


def checkpoint_step(checkpoint: str) -> int:
    """The step a checkpoint was saved at (its trainer state's)."""
    return int(json.loads((Path(checkpoint) / CHECKPOINT_WRITTEN_LAST).read_text(encoding="utf-8"))["global_step"])


def resume(trainer: Any, config: TrainConfig, title: str) -> None:
    """Train, resuming from the run's last checkpoint when there is one, its steps shown as ``title``.

    A checkpoint at this run's ``max_steps`` (a run killed after training, before ``final/``) is loaded as it is:
    resumed there, transformers would train one step past ``max_steps``. (A rerun asking for more steps trains on.)"""
    show_training_progress(trainer, title)
    checkpoint = last_checkpoint(Path(config.run_dir) / "checkpoints")
    if checkpoint and checkpoint_step(checkpoint) >= trainer.args.max_steps > 0:
        trainer._load_from_checkpoint(checkpoint)  # the weights (a LoRA adapter or the whole model) Trainer.train would load
        return
    trainer.train(resume_from_checkpoint=checkpoint)


def save_final(trainer: Any, tokenizer: Any, out: Path, prompts_dir: str = "") -> None:
    """Save a plain model (LoRA merged) that every engine can load (the main process; the others wait), with the
    prompt templates it was trained in (``prompts_dir``'s ``.md`` files) in ``out/prompts``: commands prompt a
    checkpoint with the templates it carries (``engine.model_store.model_prompts``)."""
    if is_main_process():
        model = trainer.model
        if hasattr(model, "merge_and_unload"):
            model = model.merge_and_unload()
        out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(out), safe_serialization=True)
        tokenizer.save_pretrained(str(out))
        if prompts_dir:
            carried = out / PROMPTS_FOLDER
            carried.mkdir(exist_ok=True)
            for template in sorted(Path(prompts_dir).glob("*.md")):
                shutil.copyfile(template, carried / template.name)
    wait_for_everyone()


def finish(config: TrainConfig, title: str) -> Path:
    """Redraw the reward curves and mark the run complete (after ``final/`` is saved); returns ``final/``.

    The main process writes; every process returns once ``COMPLETE`` is there."""
    run_dir = Path(config.run_dir)
    if is_main_process():
        plot_rewards(run_dir / "metrics.jsonl", run_dir / "rewards.png", f"{title}: {config.model.name}")
        mark_complete(run_dir)
    wait_for_everyone()
    return run_dir / "final"
