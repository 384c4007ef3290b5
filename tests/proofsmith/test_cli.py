"""The three commands end to end as a user runs them: on the embedded model (the default), and where the subject is a
command's mechanics rather than the default model, on the bundled world model (5.4M parameters: seconds faster a test)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from proofsmith.commands.verify import print_verification

pytestmark = pytest.mark.slow

PROBLEM = "Prove that the product of two odd integers is odd."
PROOF = "Let a = 2m + 1 and b = 2n + 1. Then ab = 4mn + 2m + 2n + 1 = 2(2mn + m + n) + 1, which is odd."
ANALYSIS = (
    "Here is my evaluation of the solution:\nThe algebra is correct and complete.\n"
    "Based on my evaluation, the final overall score should be: \\boxed{1}"
)
SHORT = ("--max-tokens", "40", "--seed", "0")
WORLD_PROBLEM = "Prove that (a + 3b)^2 - (a - 3b)^2 = 12ab for all real numbers a and b."
WORLD_MODEL = ("--model", "world-model", "--max-tokens", "400", "--seed", "0")  # its proofs and analyses end in ~100-400


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {"problem": tmp_path / "problem.txt", "proof": tmp_path / "proof.md", "analysis": tmp_path / "analysis.md"}
    for name, text in (("problem", PROBLEM), ("proof", PROOF), ("analysis", ANALYSIS)):
        paths[name].write_text(text, encoding="utf-8")
    return {name: str(path) for name, path in paths.items()}


def test_prove_records_every_round(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    out = tmp_path / "run.jsonl"
    result = cli("prove", PROBLEM, "--engine", "transformers", "--max-rounds", "2", "--out", str(out), "--json", *SHORT)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)  # stdout holds exactly one JSON object
    assert summary["rounds"] in (1, 2) and summary["engine"] == "transformers" and summary["model"] == "embedded"
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records[0]["type"] == "config" and records[0]["config"]["prove"]["max_rounds"] == 2
    rounds = [record for record in records if record["type"] == "round"]
    assert [record["round"] for record in rounds] == list(range(1, len(rounds) + 1))
    for record in rounds:
        assert record["prompt"][0]["role"] == "user" and PROBLEM in record["prompt"][0]["content"]
        assert record["completion"] and record["finish_reason"] in ("stop", "length")
        assert record["completion_tokens"] > 0 and record["prompt_tokens"] > 0 and record["generate_s"] > 0
        assert record["engine"] == "transformers" and "self_score" in record and "proof" in record
    assert records[-1]["type"] == "result" and records[-1]["rounds"] == summary["rounds"]
    assert summary["completion_tokens"] == sum(record["completion_tokens"] for record in rounds)
    assert not (tmp_path / "run.jsonl.partial").exists()


def test_prove_with_verifier_feedback_and_threads(cli, tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    result = cli(
        "prove", WORLD_PROBLEM, "--engine", "transformers", "--max-rounds", "1", "--samples", "2",
        "--feedback", "verifier", "--verify-samples", "2", "--out", str(out), *WORLD_MODEL,
    )
    assert result.returncode == 0, result.stderr
    assert "## Proof" in result.stdout and "rounds: 1" in result.stdout
    rounds = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()][1:-1]
    assert sorted(record["thread"] for record in rounds) == [0, 1]
    verified = [record for record in rounds if record["proof"]]
    assert verified, "no thread wrote a proof to verify"
    for record in verified:
        assert len(record["verification"]["samples"]) == 2


def test_verify_json_and_text(cli, files: dict[str, str], embedded_checkpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = cli("verify", "--problem", files["problem"], "--proof", files["proof"], "--samples", "3", "--json", *SHORT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["samples"]) == 3 and len(report["scores"]) == 3
    valid = [score for score in report["scores"] if score is not None]
    assert report["score"] == (sum(valid) / len(valid) if valid else None)
    assert report["format_failures"] == 3 - len(valid)
    print_verification(report, "score")  # what the command prints without --json (one process fewer: ~8 s)
    text = capsys.readouterr().out
    assert text.startswith("score: ") and "--- sample 3:" in text and report["samples"][0]["analysis"].strip() in text


def test_meta_verify_json(cli, files: dict[str, str]) -> None:
    result = cli(
        "meta-verify", "--problem", files["problem"], "--proof", files["proof"], "--analysis", files["analysis"],
        "--samples", "2", "--json", "--engine", "transformers", *WORLD_MODEL,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["samples"]) == 2 and report["scores"] == [sample["score"] for sample in report["samples"]]
    valid = [score for score in report["scores"] if score is not None]
    assert report["rating"] == (sum(valid) / len(valid) if valid else None)
    assert report["format_failures"] == 2 - len(valid)


def test_verify_on_in_process_vllm(cli, files: dict[str, str], embedded_checkpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROOFSMITH_PROGRESS_INTERVAL", "0.2")
    result = cli(
        "verify", "--problem", files["problem"], "--proof", files["proof"], "--engine", "vllm", "--samples", "2",
        "--json", "--set", "engine.max_model_len=4096", *SHORT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "vllm" and len(report["samples"]) == 2
    # vLLM's import warnings, torch's NUMA notice and the checkpoint-loading bars stay off the terminal;
    # what is left is the engine call's progress, ending with the request answered and its tokens.
    lines = result.stderr.strip().splitlines()
    assert lines and all(line.startswith("proofsmith: vllm generate: ") for line in lines), result.stderr
    assert lines[-1].startswith("proofsmith: vllm generate: 1/1 requests (100%)")
    assert f"tokens={report['completion_tokens']}," in lines[-1]


def test_verify_through_a_real_server(cli, files: dict[str, str], vllm_server) -> None:
    result = cli(
        "verify", "--problem", files["problem"], "--proof", files["proof"], "--base-url", vllm_server.base_url,
        "--samples", "2", "--json", *SHORT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == "openai" and report["model"] == "smollm2" and len(report["samples"]) == 2


def test_user_prompt_directory_replaces_a_template(cli, tmp_path: Path) -> None:
    """On the bundled world model (5.4M parameters, seconds faster than the 135M): --prompts also wins over the
    prompts it carries."""
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "generate.md").write_text("CUSTOM TEMPLATE. Prove:\n{{problem}}", encoding="utf-8")
    (prompts / "generate.system.md").write_text("CUSTOM SYSTEM.", encoding="utf-8")
    out = tmp_path / "run.jsonl"
    result = cli(
        "prove", PROBLEM, "--engine", "transformers", "--model", "world-model", "--prompts", str(prompts), "--max-rounds", "1",
        "--out", str(out), *SHORT,
    )
    assert result.returncode == 0, result.stderr
    (round_,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if '"type": "round"' in line]
    assert round_["prompt"][0] == {"role": "system", "content": "CUSTOM SYSTEM."}
    assert round_["prompt"][1]["content"].startswith("CUSTOM TEMPLATE. Prove:\n<problem>\n" + PROBLEM)


def test_dry_run_prints_the_resolved_config_without_loading_a_model(cli, tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text("[prove]\nmax_rounds = 5\n[engine]\nbatch_size = 4\n", encoding="utf-8")
    result = cli("prove", PROBLEM, "--config", str(config), "--max-rounds", "3", "--set", "sampling.seed=9", "--dry-run")
    assert result.returncode == 0, result.stderr
    resolved = tomllib.loads(result.stdout)
    assert resolved["prove"]["max_rounds"] == 3 and resolved["engine"]["batch_size"] == 4
    assert resolved["sampling"]["seed"] == 9
