"""One GRPO run for one role on TRL's ``GRPOTrainer`` (accelerate underneath).

The run directory is ``training.trainers.setup``'s. Rollouts are sampled per ``[rollouts]``
with transformers generation, or with TRL's vLLM colocate or server mode when
``grpo.use_vllm`` (GPU). The reward scores them per ``[rewards]`` and ``[scoring]``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from training.config import TrainConfig
from training.processes import per_process
from training.rewards.role_rewards import (
    EnhancedVerifierReward,
    GeneratorReward,
    MetaVerifierReward,
    RoleReward,
    VerifierReward,
)
from training.rewards.scoring_engines import (
    PolicyEngine,
    ScoringClient,
    close_all,
    open_scoring_engines,
    scoring_sources,
    stage_clients,
)
from training.role_data.rows import TrainingRow
from training.trainers.setup import (
    common_arguments,
    finish,
    grpo_dataset_records,
    lora_config,
    metrics_callback,
    model_location,
    resume,
    save_final,
)

logger = logging.getLogger(__name__)


def build_reward(role: str, config: TrainConfig, with_meta_tasks: bool = False) -> tuple[RoleReward, dict[str, Any]]:
    """The role's reward and the separate scoring engines it opened, by source. ``with_meta_tasks``: the
    verifier's data holds meta-verification prompts too (the enhanced verifier).

    Stages scored by the trained model itself (policy, or reference with LoRA) wait in
    ``reward.waiting`` until ``build_trainer`` attaches the model.
    """
    sources = scoring_sources(role, config)
    engines = open_scoring_engines(config, set(sources.values()), config.grpo.group_size * config.grpo.prompts_per_step,
                                   reference_in_trainer=config.model.lora)
    clients = stage_clients(sources, engines, config.rewards.retries)
    reward = role_reward(role, config, clients, with_meta_tasks)
    reward.waiting = {stage: source for stage, source in sources.items() if clients[stage] is None}
    return reward, engines


def role_reward(role: str, config: TrainConfig, clients: dict[str, ScoringClient | None],
                with_meta_tasks: bool = False) -> RoleReward:
    """The role's reward over scoring clients by stage ('verifier', 'meta'); a stage without one is attached later."""
    shared = {"prompts_dir": config.prompts_dir or None, "sampling": config.scoring}
    if role == "verifier":
        kind = EnhancedVerifierReward if with_meta_tasks else VerifierReward
        return kind(config.rewards, meta=clients.get("meta"), **shared)
    if role == "meta-verifier":
        return MetaVerifierReward(config.rewards, **shared)
    return GeneratorReward(config.rewards, verifier=clients.get("verifier"), meta=clients.get("meta"), **shared)


def grpo_arguments(config: TrainConfig) -> Any:
    from trl import GRPOConfig

    grpo, rollouts = config.grpo, config.rollouts
    return GRPOConfig(
        **common_arguments(config, grpo.save_steps),
        per_device_train_batch_size=per_process(grpo.group_size * grpo.prompts_per_step, "grpo.group_size x grpo.prompts_per_step"),
        num_generations=grpo.group_size,
        gradient_accumulation_steps=grpo.gradient_accumulation_steps,
        max_completion_length=rollouts.max_tokens,
        temperature=rollouts.temperature,
        top_p=rollouts.top_p,
        learning_rate=grpo.learning_rate,
        max_steps=grpo.max_steps,
        loss_type=grpo.loss_type,
        beta=grpo.beta,
        epsilon=grpo.epsilon,
        scale_rewards=grpo.scale_rewards,
        use_vllm=grpo.use_vllm,
        vllm_mode=grpo.vllm_mode,
        **({"vllm_server_base_url": grpo.vllm_server_base_url} if grpo.vllm_server_base_url else {}),
    )


def build_trainer(role: str, config: TrainConfig, rows: list[TrainingRow]) -> tuple[Any, RoleReward, dict[str, Any], Any]:
    """(trainer, reward, separate scoring engines by source, tokenizer) for ``role``, ready to ``train()``."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    records = grpo_dataset_records(role, config, rows, tokenizer)
    logger.info("%d of %d training prompts fit in %d tokens", len(records), len(rows), config.grpo.max_prompt_tokens)
    args = grpo_arguments(config)
    reward, scoring_engines = build_reward(role, config, any(record["task"] != role for record in records))
    try:
        trainer = GRPOTrainer(
            model=location, reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(records),
            processing_class=tokenizer, peft_config=lora_config(config), callbacks=[metrics_callback(config)],
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
    trainer, _, scoring_engines, tokenizer = build_trainer(role, config, rows)
    try:
        resume(trainer, config, f"train {role}")
    finally:
        close_all(scoring_engines)
    save_final(trainer, tokenizer, Path(config.run_dir) / "final", config.prompts_dir)
    return finish(config, f"GRPO {role}")
