"""CPU pieces of async GRPO: the segment attention that replaces TRL's FlashAttention-3 tree kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as functional

from training.async_rl.trainer import pool_reward, segment_attention


def causal(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """Plain causal attention of one sequence, (heads, tokens, dim)."""
    return functional.scaled_dot_product_attention(query, key, value, is_causal=True, enable_gqa=True)


def test_segment_attention_equals_causal_attention_of_each_path_through_the_tree() -> None:
    # One prompt of 3 tokens shared by two completions of 2 and 3 tokens, packed as TRL packs a
    # tree: queries [prompt, completion A, completion B]; keys of A's segment = prompt + A, of B's = prompt + B.
    generator = torch.Generator().manual_seed(0)
    heads, kv_heads, dim, prompt, first, second = 4, 2, 8, 3, 2, 3
    tokens = prompt + first + second
    query = torch.randn(1, heads, tokens, dim, generator=generator)
    key = torch.randn(1, kv_heads, tokens, dim, generator=generator)
    value = torch.randn(1, kv_heads, tokens, dim, generator=generator)
    path_a = list(range(prompt)) + list(range(prompt, prompt + first))
    path_b = list(range(prompt)) + list(range(prompt + first, tokens))
    kv_index = torch.tensor(list(range(prompt)) + path_a + path_b)
    output, weights = segment_attention(
        None, query, key, value, None, tree_kv_index=kv_index,
        tree_cu_seqlens_q=torch.tensor([0, prompt, prompt + first, tokens]),
        tree_cu_seqlens_k=torch.tensor([0, prompt, prompt + len(path_a), prompt + len(path_a) + len(path_b)]),
        tree_max_seqlen_q=prompt, tree_max_seqlen_k=len(path_b),
    )
    assert weights is None and output.shape == (1, tokens, heads, dim)
    for path, rows in ((path_a, range(prompt, prompt + first)), (path_b, range(prompt + first, tokens))):
        expected = causal(query[0][:, path], key[0][:, path], value[0][:, path]).transpose(0, 1)  # (len(path), heads, dim)
        torch.testing.assert_close(output[0, list(rows)], expected[prompt:], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(output[0, :prompt], expected[:prompt], rtol=1e-5, atol=1e-6)


def test_a_sliding_window_limits_how_far_back_a_token_looks() -> None:
    generator = torch.Generator().manual_seed(1)
    query, key, value = (torch.randn(1, 2, 6, 4, generator=generator) for _ in range(3))
    bounds = torch.tensor([0, 6])
    output, _ = segment_attention(None, query, key, value, None, tree_kv_index=torch.arange(6), tree_cu_seqlens_q=bounds,
                                  tree_cu_seqlens_k=bounds, tree_max_seqlen_q=6, tree_max_seqlen_k=6, sliding_window=2)
    positions = torch.arange(6)
    window = (positions[None, :] <= positions[:, None]) & (positions[None, :] > positions[:, None] - 2)
    expected = functional.scaled_dot_product_attention(query[0], key[0], value[0], attn_mask=window)
    torch.testing.assert_close(output[0], expected.transpose(0, 1))


def test_a_resumed_run_starts_after_every_group_rolled_out_before(tmp_path) -> None:
    from training.async_rl.trainer import first_new_group

    log = tmp_path / "rollouts.jsonl"
    assert first_new_group(log) == 0
    log.write_text('{"group": 0, "index": 0}\n{"group": 7, "index": 1}\n{"group": 3, "index": 0}\n{"gro', encoding="utf-8")
    assert first_new_group(log) == 8  # the line cut short by a kill is ignored


@pytest.mark.slow
@pytest.mark.parametrize(("verifier", "opened"), [("policy", set()), ("reference", {"reference"})])
def test_the_pool_scores_as_policy_and_a_frozen_copy_of_the_start_as_reference(
    tmp_path: Path, embedded_checkpoint: str, verifier: str, opened: set[str]
) -> None:
    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine
    from training.rewards.scoring_engines import close_all
    from training.config import ModelSettings, RewardSettings, TrainConfig

    config = TrainConfig(run_dir=str(tmp_path), model=ModelSettings(name=embedded_checkpoint), rewards=RewardSettings(verifier=verifier),
                         scorer=EngineConfig(backend="transformers", dtype="float32"))
    reward, engines = pool_reward("generator", config, ["http://127.0.0.1:9/v1"], "served-name")
    try:
        assert set(engines) == opened and reward.meta is None
        if verifier == "policy":
            assert isinstance(reward.verifier.engine, OpenAIEngine)
        else:
            assert reward.verifier.engine is engines["reference"] and engines["reference"].model == embedded_checkpoint
    finally:
        close_all(engines)


@pytest.mark.slow
def test_the_verifier_role_gets_its_reward_with_r_meta_from_a_frozen_copy_of_the_start(
    tmp_path: Path, embedded_checkpoint: str
) -> None:
    from engine.config import EngineConfig
    from training.config import ModelSettings, RewardSettings, TrainConfig
    from training.rewards.role_rewards import EnhancedVerifierReward, VerifierReward
    from training.rewards.scoring_engines import close_all

    config = TrainConfig(run_dir=str(tmp_path), model=ModelSettings(name=embedded_checkpoint), rewards=RewardSettings(meta="reference"),
                         scorer=EngineConfig(backend="transformers", dtype="float32"))
    reward, engines = pool_reward("verifier", config, ["http://127.0.0.1:9/v1"], "served-name")
    try:
        assert type(reward) is VerifierReward and set(engines) == {"reference"}
        assert reward.meta.engine is engines["reference"]  # the pool's weights move; R_meta's rater must not
    finally:
        close_all(engines)
    without_meta = TrainConfig(run_dir=str(tmp_path), model=ModelSettings(name=embedded_checkpoint))
    enhanced, engines = pool_reward("verifier", without_meta, ["http://127.0.0.1:9/v1"], "served-name", with_meta_tasks=True)
    assert isinstance(enhanced, EnhancedVerifierReward) and engines == {}


def test_the_async_trainer_decays_its_learning_rate_as_the_synchronous_one_does(tmp_path: Path) -> None:
    """AsyncGRPOConfig's own default is a constant rate: twice the mean rate of the same run on GRPOTrainer."""
    from training.async_rl.trainer import trainer_args
    from training.config import TrainConfig
    from training.trainers.grpo import grpo_arguments

    config = TrainConfig(run_dir=str(tmp_path))
    assert trainer_args(config, "http://127.0.0.1:9/v1").lr_scheduler_type == grpo_arguments(config).lr_scheduler_type == "linear"
