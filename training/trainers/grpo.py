"""One GRPO run for one role on TRL's ``GRPOTrainer`` (accelerate underneath).

Run directory layout (``config.run_dir``):

    config.toml        the resolved config (written by the command before anything loads)
    checkpoints/       TRL checkpoints every ``grpo.save_steps``; a rerun resumes from the last
    tensorboard/       TensorBoard event files (TRL's metrics and every reward component)
    metrics.jsonl      the same metrics, one line per step
    rewards.png        reward curves, redrawn at the end
    final/             the trained model (LoRA merged), loadable with ``--model RUN/final``
    COMPLETE           written last: the stage is done (``train loop`` skips it on rerun)

On CPU the trainer runs in float32 with ``use_cpu``; rollouts use transformers generation.
With ``grpo.use_vllm`` (GPU) TRL's vLLM colocate or server mode generates them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from training.role_data.rows import TrainingRow
from training.rewards.role_rewards import GeneratorReward, MetaVerifierReward, RoleReward, VerifierReward
from training.role_data.records import grpo_records
from training.trainers.metrics import MetricsFile, plot_rewards
from training.rewards.scoring_engines import PolicyEngine, ScoringClient, close_all, open_scoring_engines, scoring_sources, stage_clients
from training.config import TrainConfig, mark_complete

logger = logging.getLogger(__name__)


def build_reward(role: str, config: TrainConfig) -> tuple[RoleReward, dict[str, Any]]:
    """The role's reward and the separate scoring engines it opened, by source.

    Stages scored by the trained model itself (policy, or reference with LoRA) wait in
    ``reward.waiting`` until ``build_trainer`` attaches the model.
    """
    sources = scoring_sources(role, config)
    engines = open_scoring_engines(config, set(sources.values()), config.grpo.group_size * config.grpo.prompts_per_step,
                                   reference_in_trainer=config.model.lora)
    clients = stage_clients(sources, engines, config.rewards.retries)
    prompts_dir = config.prompts_dir or None
    if role == "verifier":
        reward: RoleReward = VerifierReward(config.rewards, meta=clients.get("meta"), prompts_dir=prompts_dir)
    elif role == "meta-verifier":
        reward = MetaVerifierReward(config.rewards, prompts_dir=prompts_dir)
    else:
        reward = GeneratorReward(config.rewards, verifier=clients.get("verifier"), meta=clients.get("meta"),
                                 prompts_dir=prompts_dir)
    reward.waiting = {stage: source for stage, source in sources.items() if clients[stage] is None}
    return reward, engines


def model_location(name: str) -> str:
    from engine.model_store import ensure_checkpoint

    return ensure_checkpoint(name).path


def fitting_records(records: list[dict[str, Any]], tokenizer: Any, limit: int) -> list[dict[str, Any]]:
    """Drop prompts longer than ``limit`` tokens (they would be cut by TRL or overflow the context)."""
    kept = []
    for record in records:
        ids = tokenizer.apply_chat_template(record["prompt"], add_generation_prompt=True, tokenize=True)
        length = len(ids["input_ids"] if hasattr(ids, "keys") else ids)
        if length <= limit:
            kept.append(record)
    return kept


def last_checkpoint(directory: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(directory)) if directory.is_dir() else None


def save_final(trainer: Any, tokenizer: Any, out: Path) -> None:
    """Save a plain model (LoRA merged) that every engine can load."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))


def lora_config(config: TrainConfig) -> Any:
    """The peft ``LoraConfig`` of ``[model]``, or None for full fine-tuning."""
    if not config.model.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(r=config.model.lora_rank, lora_alpha=config.model.lora_alpha,
                      target_modules=list(config.model.lora_target_modules), task_type="CAUSAL_LM")


def build_trainer(role: str, config: TrainConfig, rows: list[TrainingRow]) -> tuple[Any, RoleReward, dict[str, Any], Any]:
    """(trainer, reward, separate scoring engines by source, tokenizer) for ``role``, ready to ``train()``."""
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from data.errors import InputError

    run_dir = Path(config.run_dir)
    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    records = fitting_records(grpo_records(role, rows, config.prompts_dir or None), tokenizer, config.grpo.max_prompt_tokens)
    if not records:
        raise InputError(f"every training prompt is longer than grpo.max_prompt_tokens={config.grpo.max_prompt_tokens}")
    logger.info("%d of %d training prompts fit in %d tokens", len(records), len(rows), config.grpo.max_prompt_tokens)
    grpo, on_gpu = config.grpo, torch.cuda.is_available()
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(run_dir / "tensorboard")
    args = GRPOConfig(
        output_dir=str(run_dir / "checkpoints"),
        per_device_train_batch_size=grpo.group_size * grpo.prompts_per_step,
        num_generations=grpo.group_size,
        gradient_accumulation_steps=grpo.gradient_accumulation_steps,
        max_completion_length=grpo.max_completion_length,
        temperature=grpo.temperature,
        learning_rate=grpo.learning_rate,
        max_steps=grpo.max_steps,
        loss_type=grpo.loss_type,
        beta=grpo.beta,
        epsilon=grpo.epsilon,
        scale_rewards=grpo.scale_rewards,
        logging_steps=1,
        save_steps=grpo.save_steps,
        save_total_limit=2,
        report_to=["tensorboard"],
        seed=grpo.seed,
        use_cpu=not on_gpu,
        bf16=config.model.bf16 and on_gpu,
        gradient_checkpointing=config.model.gradient_checkpointing,
        use_vllm=grpo.use_vllm,
        vllm_mode=grpo.vllm_mode,
        **({"vllm_server_base_url": grpo.vllm_server_base_url} if grpo.vllm_server_base_url else {}),
        dataloader_num_workers=0,
    )
    peft_config = lora_config(config)
    reward, scoring_engines = build_reward(role, config)
    try:
        trainer = GRPOTrainer(
            model=location, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(records),
            processing_class=tokenizer, peft_config=peft_config, callbacks=[MetricsFile(run_dir / "metrics.jsonl")],
        )
    except BaseException:
        close_all(scoring_engines)
        raise
    for source in set(reward.waiting.values()):
        engine = PolicyEngine(trainer.model, tokenizer, starting_weights=source == "reference")
        reward.attach(source, ScoringClient(engine, config.rewards.retries))
    return trainer, reward, scoring_engines, tokenizer


def run_grpo(role: str, config: TrainConfig, rows: list[TrainingRow]) -> Path:
    """Train ``role`` on ``rows`` (resuming from the last checkpoint); returns the final model directory."""
    run_dir = Path(config.run_dir)
    trainer, _, scoring_engines, tokenizer = build_trainer(role, config, rows)
    try:
        trainer.train(resume_from_checkpoint=last_checkpoint(run_dir / "checkpoints"))
    finally:
        close_all(scoring_engines)
    final = run_dir / "final"
    save_final(trainer, tokenizer, final)
    plot_rewards(run_dir / "metrics.jsonl", run_dir / "rewards.png", f"GRPO {role}: {config.model.name}")
    mark_complete(run_dir)
    return final
