"""``proofsmith train``: bad configs fail before any model loads; real GRPO and SFT steps on the tiny world model
shipped with the tests (tests/fixtures/tiny-world-model)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from data.jsonl import read_jsonl
from parity_sets import graded_rows, rated_rows
from train_inputs import write_jsonl, write_short_prompts

NO_MODEL = ("--model", "./no-such-model")  # any attempt to load a model would fail differently


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "graded.jsonl", graded_rows(2))


def test_a_starting_model_that_carries_prompts_is_trained_in_them_unless_prompts_are_given(
    cli, tmp_path: Path, graded: Path, tiny_world_model: str
) -> None:
    carried = Path(tiny_world_model) / "prompts"
    result = cli("train", "verifier", "--run-dir", str(tmp_path / "run"), "--data", str(graded), "--model", tiny_world_model,
                 "--dry-run")
    assert result.returncode == 0, result.stderr
    assert tomllib.loads(result.stdout)["prompts_dir"] == str(carried)
    chosen = tmp_path / "prompts"
    chosen.mkdir()
    (chosen / "verify.md").write_text("Grade it.\n{{problem}}\n{{proof}}", encoding="utf-8")
    result = cli("train", "verifier", "--run-dir", str(tmp_path / "run2"), "--data", str(graded), "--model", tiny_world_model,
                 "--prompts", str(chosen), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert tomllib.loads(result.stdout)["prompts_dir"] == str(chosen)


def test_dry_run_writes_the_resolved_config_and_stops(cli, tmp_path: Path, graded: Path) -> None:
    run_dir = tmp_path / "run"
    result = cli("train", "verifier", "--run-dir", str(run_dir), "--data", str(graded), "--max-steps", "7",
                 "--set", "rewards.alpha=0.5", "--dry-run", *NO_MODEL)
    assert result.returncode == 0, result.stderr
    written = (run_dir / "config.toml").read_text(encoding="utf-8")
    assert written == result.stdout and "max_steps = 7" in written and "alpha = 0.5" in written
    assert sorted(path.name for path in run_dir.iterdir()) == ["config.toml"]


@pytest.mark.parametrize(
    ("role", "arguments", "message"),
    [
        ("verifier", ("--set", "grpo.bogus=1"), "unknown setting grpo.'bogus'"),
        ("verifier", ("--set", "grpo.group_size=1"), "group_size must be >= 2"),
        ("verifier", ("--data", "missing.jsonl"), "training data not found: missing.jsonl"),
        ("verifier", ("--set", "data.score_column=grade"), "missing column 'grade'"),
        ("meta-verifier", (), "missing column 'analysis'"),
        ("generator", ("--set", "data.problem_column=statement"), "missing column 'statement'"),
        ("verifier", ("--set", "data.path="), "no training data"),
        ("sft", ("--set", "async=true"), "`train sft` runs synchronously"),
        ("generator", ("--set", "async_rl.weight_transfer=nccl"), "nccl pushes into exactly one server"),
        ("generator", ("--set", "async_rl.servers=localhost:8000"), "servers must be http(s) URLs"),
        ("generator", ("--set", "async=true", "--set", "async_rl.server_max_model_len=512"), "does not fit"),
        ("generator", ("--set", "async=true", "--set", "async_rl.queue_size=4", "--group-size", "8"), "must hold a whole group"),
        ("generator", ("--set", "rewards.verifier=judge"), "verifier must be one of reference, policy, engine, checker"),
        ("generator", ("--set", "rewards.verifier=checker"), "'checker' needs world problems with a goal"),
        ("generator", ("--set", "rewards.meta=checker"), "rates a verifier's analyses of world proofs; `train generator` has none"),
        ("verifier", ("--set", "rewards.meta=checker"), "needs world proofs that say their first bad step"),
        ("generator", ("--set", "rewards.meta=checker_work"), "'checker_work' rates a verifier's analyses of world proofs"),
        ("verifier", ("--set", "rewards.meta=checker_work"), "'checker_work' needs world proofs that say their first bad step"),
        ("verifier", ("--set", "rewards.meta=judge"), "meta must be one of reference, policy, engine, none, checker, checker_work"),
    ],
)
def test_bad_configs_fail_in_one_line_before_loading_a_model(
    cli, tmp_path: Path, graded: Path, role: str, arguments: tuple[str, ...], message: str
) -> None:
    result = cli("train", role, "--run-dir", str(tmp_path / "run"), "--data", str(graded), *arguments, *NO_MODEL)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_r_meta_from_a_rater_that_reads_only_the_box_is_refused_before_loading_a_model(
    cli, tmp_path: Path, graded: Path
) -> None:
    metrics = tmp_path / "metrics.json"
    split = {"by_boxed_score": {"0": {"true": 40, "invented": 40, "gap": 0.01, "interval": [-0.08, 0.1], "decided": True}},
             "unrated_critiques": 0, "rates_by_defect": False}
    metrics.write_text(json.dumps({"settings": {"model": NO_MODEL[1]}, "defect_split": split}), encoding="utf-8")
    checked = ("--set", "rewards.meta=reference", "--set", f"rewards.meta_check={metrics}")
    result = cli("train", "verifier", "--run-dir", str(tmp_path / "run"), "--data", str(graded), *checked, *NO_MODEL)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "R_meta refused as a reward source: ./no-such-model does not split true from invented critiques" in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_meta_check_applies_only_where_r_meta_is_paid(tmp_path: Path) -> None:
    from data.errors import InputError
    from proofsmith.commands.train import check_meta_source
    from training.config import ModelSettings, RewardSettings, TrainConfig

    failing = tmp_path / "metrics.json"
    failing.write_text(json.dumps({"settings": {"model": "world-model"}, "defect_split": {
        "by_boxed_score": {}, "unrated_critiques": 0, "rates_by_defect": False}}), encoding="utf-8")
    for meta in ("reference", "policy"):
        with pytest.raises(InputError, match="R_meta refused"):
            check_meta_source(TrainConfig(model=ModelSettings(name="world-model"),
                                          rewards=RewardSettings(meta=meta, meta_check=str(failing))))
    check_meta_source(TrainConfig(model=ModelSettings(name="world-model"), rewards=RewardSettings(meta="none",
                                                                                                 meta_check=str(failing))))
    check_meta_source(TrainConfig(rewards=RewardSettings(meta="reference")))  # no check asked for


def test_a_score_outside_the_scale_names_its_line(cli, tmp_path: Path) -> None:
    rows = graded_rows(1)
    rows[4]["score"] = 0.7
    data = write_jsonl(tmp_path / "bad.jsonl", rows)
    result = cli("train", "sft", "--run-dir", str(tmp_path / "run"), "--data", str(data), *NO_MODEL)
    assert result.returncode == 2
    assert "row at line 5: score 0.7 is not one of 0, 0.5, 1" in result.stderr


def test_an_unknown_key_in_the_config_file_is_refused(cli, tmp_path: Path, graded: Path) -> None:
    config = tmp_path / "train.toml"
    config.write_text(f'run_dir = "{tmp_path / "run"}"\n[data]\npath = "{graded}"\nproblem_colum = "x"\n', encoding="utf-8")
    result = cli("train", "verifier", "--config", str(config), *NO_MODEL)
    assert result.returncode == 2 and "unknown setting data.'problem_colum'" in result.stderr


def tensors(directory: Path) -> dict[str, object]:
    from safetensors.torch import load_file

    loaded: dict[str, object] = {}
    for shard in sorted(directory.glob("*.safetensors")):
        loaded.update(load_file(str(shard)))
    return loaded


def changed_weights(before: Path, after: Path) -> int:
    import torch

    old, new = tensors(before), tensors(after)
    return sum(1 for name, value in new.items() if name in old and not torch.equal(old[name], value))  # type: ignore[arg-type]


@pytest.mark.slow
def test_sft_cold_start_writes_a_model_that_prove_can_load(cli, tmp_path: Path, tiny_world_model: str) -> None:
    """A real `train sft` cold start of all three formats (on the tiny world model: the subject is the command; SFT of
    the 135M: tests/training/role_data/test_verifier_rows_data.py), a model `prove` loads, and a rerun that finds the
    run complete."""
    prompts = write_short_prompts(tmp_path / "prompts")
    # Each proof appears with every claimed score (the score column is the analysis' claim).
    rows = [{**row, "score": float(str(row["id"]).rpartition("-c")[2])} for row in rated_rows(2)]
    data, run_dir = write_jsonl(tmp_path / "rated.jsonl", rows), tmp_path / "sft"
    formats = ("--set", "sft.formats=verifier,generator,meta-verifier")
    result = cli("train", "sft", "--run-dir", str(run_dir), "--data", str(data), "--prompts", str(prompts),
                 "--model", tiny_world_model, "--json", "--sft-steps", "8", "--set", "sft.batch_size=4",
                 "--set", "sft.learning_rate=5e-4", "--set", "sft.max_length=256", "--set", "model.lora=false", *formats)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["steps"] == 8 and summary["loss"]["last"] < summary["loss"]["first"]
    assert (run_dir / "COMPLETE").exists() and (run_dir / "rewards.png").stat().st_size > 0
    assert changed_weights(Path(tiny_world_model), run_dir / "final") > 0
    proved = cli("prove", "Prove that 2 + 2 = 4.", "--engine", "transformers", "--model", str(run_dir / "final"),
                 "--prompts", str(prompts), "--max-rounds", "1", "--max-tokens", "8", "--json")
    assert proved.returncode == 0, proved.stderr
    rerun = cli("train", "sft", "--run-dir", str(run_dir), "--data", str(data), "--json", *formats)
    assert rerun.returncode == 0 and "already complete" in rerun.stderr


def world_rows(model: str, name: str) -> list[dict]:
    """Rows of the world a tiny world model was trained on (``model``/../world/``name``)."""
    return read_jsonl(Path(model).parent / "world" / name)


@pytest.mark.slow
@pytest.mark.parametrize("role", ["verifier", "meta-verifier"])
def test_a_real_grpo_step_changes_weights_and_writes_a_loadable_model(
    cli, tmp_path: Path, tiny_world_model: str, role: str
) -> None:
    """The subject is the GRPO step (TRL, the role's reward, checkpoints, metrics, the final model), so it runs on the
    tiny world model, whose samples of these roles parse often enough that a group's rewards differ (the generator's
    step: below)."""
    # The verifier is the enhanced one: its step holds its 1 training proof and 1 rated analysis (--meta-data), and it
    # measures greedy agreement before and after on 1 held-out proof and that training proof.
    if role == "verifier":
        data = write_jsonl(tmp_path / "data.jsonl", world_rows(tiny_world_model, "train.jsonl")[5:7])
        rated = write_jsonl(tmp_path / "rated.jsonl", world_rows(tiny_world_model, "train_meta.jsonl")[:1])
        measured = ("--set", "data.max_rows=2", "--set", "data.holdout=1", "--set", "grpo.prompts_per_step=2",
                    "--meta-data", str(rated))
    else:
        data, measured = write_jsonl(tmp_path / "data.jsonl", world_rows(tiny_world_model, "train_meta.jsonl")[1:13]), ()
    run_dir = tmp_path / "run"
    result = cli("train", role, "--run-dir", str(run_dir), "--data", str(data), "--model", tiny_world_model,
                 "--prompts", str(Path(tiny_world_model) / "prompts"), "--json", "--max-steps", "1", "--group-size", "4",
                 "--max-tokens", "250", "--learning-rate", "1e-4", "--set", "grpo.save_steps=1",
                 "--set", "scoring.max_tokens=250", "--set", "grpo.prompts_per_step=1", *measured)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["steps"] == 1 and "reward" in summary
    if measured:
        for name, rows_measured in (("holdout", 1), ("training_rows", 1)):
            before, after = summary[name]["before"], summary[name]["after"]
            assert (before["rows"], after["rows"]) == (rows_measured, rows_measured)
            assert before["model"] == tiny_world_model and after["model"] == str(run_dir / "final")
            assert 0 <= after["exact"] <= 1 and 0 <= after["format_failure_rate"] <= 1
            assert sum(after["predicted"].values()) == rows_measured and set(after["predicted"]) <= {"none", "0", "0.5", "1"}
    metrics = assert_a_grpo_step_was_written(run_dir, Path(tiny_world_model))
    if measured:  # both tasks were rewarded in the one step: verifications and ratings, half of each
        assert [record[key] for record in metrics for key in record if key.endswith("task/meta_share")] == [0.5]
        assert any(key.endswith("rating/reward/rating_agreement") or key.endswith("rating/format_failure_rate")
                   for record in metrics for key in record)
    # Every role writes its final model the same way; the verifier's 'after' agreement above loaded run_dir/final in
    # the transformers engine that `verify` uses and scored its greedy verifications, so the written model loads.


def assert_a_grpo_step_was_written(run_dir: Path, start: Path) -> list[dict]:
    """One GRPO step's outputs: complete, one checkpoint, TensorBoard and metrics, a final model whose weights moved.
    Returns the metrics records."""
    assert (run_dir / "COMPLETE").exists() and (run_dir / "rewards.png").stat().st_size > 0
    checkpoints = sorted(path.name for path in (run_dir / "checkpoints").glob("checkpoint-*"))
    assert checkpoints == ["checkpoint-1"]
    assert list((run_dir / "tensorboard").rglob("events.out.tfevents.*"))
    metrics = read_jsonl(run_dir / "metrics.jsonl")
    assert any(key.endswith("reward/format") for record in metrics for key in record)
    assert changed_weights(start, run_dir / "final") > 0  # the group's rewards differed: GRPO had a signal
    return metrics


@pytest.mark.slow
def test_a_real_generator_grpo_step(cli, tmp_path: Path, tiny_world_model: str) -> None:
    """The generator's GRPO step on a world problem: the checker's verdict on the rollouts is logged beside the reward."""
    # Measured on this problem (2026-12-05): no rollout broke the format, reward mean 0.67 and std 0.58, true pass rate 0.5.
    problem = world_rows(tiny_world_model, "train_problems.jsonl")[0]
    data, run_dir = write_jsonl(tmp_path / "data.jsonl", [problem]), tmp_path / "run"
    result = cli("train", "generator", "--run-dir", str(run_dir), "--data", str(data), "--model", tiny_world_model,
                 "--prompts", str(Path(tiny_world_model) / "prompts"), "--json", "--max-steps", "1", "--group-size", "4",
                 "--max-tokens", "400", "--learning-rate", "1e-4",
                 "--set", "grpo.save_steps=1", "--set", "scoring.max_tokens=250", "--set", "grpo.prompts_per_step=1")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["steps"] == 1
    metrics = assert_a_grpo_step_was_written(run_dir, Path(tiny_world_model))
    assert any(key.endswith("truth/pass_rate") for record in metrics for key in record)


@pytest.mark.slow
def test_two_processes_score_their_rollouts_against_one_shared_server(
    tmp_path: Path, tiny_world_model: str, vllm_server
) -> None:
    """A two-process verifier GRPO step whose meta-verifier (R_meta) is one vLLM server both processes call:
    each process rewards its half of the step's rollouts, and what the server generated is what the
    processes say they asked for."""
    from engine.vllm_server import served_generation_tokens
    from launching import launch

    # The tiny world model is the policy (its verifications parse often enough to be sent for rating); the
    # session's server, the 135M, rates them.
    data, run_dir = write_jsonl(tmp_path / "data.jsonl", world_rows(tiny_world_model, "train.jsonl")[4:8]), tmp_path / "run"
    before = served_generation_tokens(vllm_server.base_url)
    result = launch("train", "verifier", "--run-dir", str(run_dir), "--data", str(data), "--model", tiny_world_model,
                    "--prompts", str(Path(tiny_world_model) / "prompts"), "--json", "--max-steps", "1", "--group-size", "4",
                    "--max-tokens", "250", "--set", "grpo.prompts_per_step=2", "--set", "grpo.save_steps=1",
                    "--set", "rewards.meta=engine", "--set", "scorer.backend=openai",
                    "--set", f"scorer.base_urls={vllm_server.base_url}", "--set", "scoring.max_tokens=32")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["steps"] == 1
    step = read_jsonl(run_dir / "metrics.jsonl")[0]
    assert [step[f"process/rank{rank}/rollouts"] for rank in (0, 1)] == [4.0, 4.0]
    asked = sum(step[f"process/rank{rank}/scoring_tokens"] for rank in (0, 1))
    assert asked > 0 and served_generation_tokens(vllm_server.base_url) - before == asked
