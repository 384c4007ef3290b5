"""Commands reach no network and send no telemetry by default, with the network unreachable and every attempt logged.

Each command runs in a fresh process with ``no_network/sitecustomize.py`` first on
PYTHONPATH: it records and refuses every connection or name lookup beyond loopback. The
user's own switches (and ``CI``, which silences TRL's ping on its own) are removed from
the environment, so what is tested is proofsmith's defaults. The guard and the telemetry
paths are shown to be seen when a user turns them back on, so an empty log means something.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proofsmith.offline import OFFLINE_DEFAULTS
from parity_sets import rated_rows

REPO = Path(__file__).resolve().parents[2]
GUARD = Path(__file__).resolve().parent / "no_network"
USER_SWITCHES = (*OFFLINE_DEFAULTS, "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "DISABLE_TELEMETRY", "DO_NOT_TRACK",
                 "VLLM_DO_NOT_TRACK", "CI")
ONLINE = {"HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_TELEMETRY": "0"}


def guarded_environment(log: Path, env: dict[str, str] | None) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if name not in USER_SWITCHES}
    environment.update(
        PYTHONPATH=os.pathsep.join(filter(None, (str(GUARD), os.environ.get("PYTHONPATH")))),
        PROOFSMITH_NETWORK_LOG=str(log), PYTHONWARNINGS="ignore", **(env or {}),
    )
    return environment


def new_log(tmp_path: Path) -> Path:
    log = tmp_path / f"network-{len(list(tmp_path.glob('network-*')))}.log"
    log.touch()
    return log


def guarded(tmp_path: Path, *arguments: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run ``python ARGUMENTS`` without a network; returns the process and the attempts it made."""
    log = new_log(tmp_path)
    result = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, cwd=REPO,
                            env=guarded_environment(log, env), timeout=900)
    return result, log.read_text(encoding="utf-8").splitlines()


def first_attempt(tmp_path: Path, *arguments: str, env: dict[str, str] | None = None, timeout_s: float = 900) -> list[str]:
    """Run ``python ARGUMENTS`` without a network until it makes its first attempt (then stop it); the attempts."""
    log = new_log(tmp_path)
    process = subprocess.Popen([sys.executable, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               cwd=REPO, env=guarded_environment(log, env), start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while process.poll() is None and not log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return log.read_text(encoding="utf-8").splitlines()


GUARD_CHECK = """
import socket
try:
    socket.create_connection(("huggingface.co", 443), timeout=5)
except OSError as error:
    print("refused:", error.errno)
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
socket.create_connection(server.getsockname(), timeout=5).close()
print("loopback open")
"""


def test_the_guard_records_and_refuses_the_network_but_not_loopback(tmp_path: Path) -> None:
    result, attempts = guarded(tmp_path, "-c", GUARD_CHECK)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["refused: 101", "loopback open"]
    assert len(attempts) == 1 and "create_connection ('huggingface.co', 443)" in attempts[0]


TELEMETRY = """
from proofsmith.offline import stay_offline
stay_offline()
from huggingface_hub.utils import _telemetry, send_telemetry
send_telemetry("proofsmith/test")  # what TRL's trainers call at start
_telemetry._TELEMETRY_QUEUE.join()  # the ping is sent from a thread
"""


def test_hub_telemetry_is_sent_only_when_the_user_turns_it_back_on(tmp_path: Path) -> None:
    result, attempts = guarded(tmp_path, "-c", TELEMETRY)
    assert result.returncode == 0, result.stderr
    assert attempts == []
    result, attempts = guarded(tmp_path, "-c", TELEMETRY, env=ONLINE)
    assert result.returncode == 0, result.stderr
    assert attempts and all("huggingface.co" in attempt for attempt in attempts)


def test_a_hub_model_that_is_not_cached_is_refused_with_the_way_to_allow_it(tmp_path: Path) -> None:
    result, attempts = guarded(tmp_path, "-m", "proofsmith", "verify", "--problem", __file__, "--proof", __file__,
                               "--model", "proofsmith-test/no-such-model", "--engine", "transformers",
                               env={"HF_HOME": str(tmp_path / "hf")})
    assert result.returncode == 2 and attempts == []
    assert result.stderr.strip().splitlines() == [
        "proofsmith: error: model 'proofsmith-test/no-such-model' is not a local path and not in the Hugging Face "
        "cache, and proofsmith works offline by default: set HF_HUB_OFFLINE=0 to download it (later runs find it in the cache)"
    ]


@pytest.mark.slow
def test_verify_on_the_embedded_model_makes_no_attempt(tmp_path: Path, embedded_checkpoint: str) -> None:
    problem, proof = tmp_path / "problem.txt", tmp_path / "proof.md"
    problem.write_text("Prove that the product of two odd integers is odd.", encoding="utf-8")
    proof.write_text("Let a = 2m + 1 and b = 2n + 1. Then ab = 2(2mn + m + n) + 1, which is odd.", encoding="utf-8")
    result, attempts = guarded(tmp_path, "-m", "proofsmith", "verify", "--problem", str(problem), "--proof", str(proof),
                               "--engine", "transformers", "--samples", "1", "--max-tokens", "8", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["engine"] == "transformers"
    assert attempts == []


@pytest.mark.slow
def test_a_trl_trainer_start_pings_the_hub_only_when_the_user_turns_telemetry_back_on(
    tmp_path: Path, tiny_world_model: str
) -> None:
    """One SFT step on TRL's SFTTrainer, whose start sends telemetry unless told not to.

    The shipped CPU recipe, made small: one pair of the bundled proofs, a one-line prompt, and the tiny world model
    (the subject is the trainer's start, not the model).
    """
    data = tmp_path / "rated.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rated_rows(1)), encoding="utf-8")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "verify.md").write_text("Grade this proof.\nProblem: {{problem}}\nProof: {{proof}}", encoding="utf-8")

    def train(run: str) -> tuple[str, ...]:
        return ("-m", "proofsmith", "train", "sft", "--config", "configs/sft_cpu.toml", "--run-dir", str(tmp_path / run),
                "--data", str(data), "--prompts", str(prompts), "--sft-steps", "1", "--set", "sft.batch_size=2",
                "--set", "sft.max_length=256", "--set", "sft.formats=verifier", "--set", "model.lora=true",
                "--model", tiny_world_model, "--json")

    result, attempts = guarded(tmp_path, *train("offline"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["steps"] == 1
    assert attempts == []
    # The same start with the user's switches turned back on pings the Hub (stopped there: the rest is the same run).
    attempts = first_attempt(tmp_path, *train("online"), env=ONLINE)
    assert attempts and all("huggingface.co" in attempt for attempt in attempts)
