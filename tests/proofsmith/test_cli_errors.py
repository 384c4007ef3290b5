"""Bad input: one line on stderr naming the problem, exit code 2, no traceback, no output file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_checks import assert_clean_error
from engine.vllm_server import free_port


@pytest.fixture
def problem(tmp_path: Path) -> Path:
    path = tmp_path / "problem.txt"
    path.write_text("Prove that 1 + 1 = 2.", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "content, fragment",
    [(None, "proof file not found"), (b"", "is empty"), (b"  \n\t\n", "is empty"), (b"caf\xe9 proof", "is not UTF-8")],
    ids=["missing", "empty", "whitespace", "latin-1"],
)
def test_bad_proof_file(cli, tmp_path: Path, problem: Path, content: bytes | None, fragment: str) -> None:
    proof = tmp_path / "proof.md"
    if content is not None:
        proof.write_bytes(content)
    assert_clean_error(cli("verify", "--problem", str(problem), "--proof", str(proof)), fragment)


def test_directory_instead_of_a_file(cli, tmp_path: Path, problem: Path) -> None:
    assert_clean_error(cli("verify", "--problem", str(tmp_path), "--proof", str(problem)), "is a directory")


def test_missing_problem_file_for_prove(cli, tmp_path: Path) -> None:
    assert_clean_error(cli("prove", "--problem-file", str(tmp_path / "nope.txt")), "problem file not found")


def test_unknown_engine(cli, problem: Path) -> None:
    assert_clean_error(cli("verify", "--problem", str(problem), "--proof", str(problem), "--engine", "tgi"), "unknown engine 'tgi'")


def test_model_path_that_does_not_exist(cli, problem: Path) -> None:
    result = cli("verify", "--problem", str(problem), "--proof", str(problem), "--engine", "transformers", "--model", "./models/nothing-here")
    assert_clean_error(result, "model path does not exist: ./models/nothing-here")


def test_unreachable_server(cli, problem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    # A plain progress line every 0.1 s, so that the waits between the 3 attempts (0.25 s, then 0.5 s, each
    # with jitter down to half) show the retry line off a terminal.
    monkeypatch.setenv("PROOFSMITH_PROGRESS_INTERVAL", "0.1")
    result = cli(
        "verify", "--problem", str(problem), "--proof", str(problem), "--base-url", url, "--model", "m",
        "--max-retries", "2", "--set", "engine.retry_backoff_s=0.5",
    )
    assert_clean_error(result, "server unreachable after 3 attempts")
    # The retries are one updating line (attempt k of n, next try), not a warning per retry and per pool change.
    lines = result.stderr.strip().splitlines()
    retry_lines = [line for line in lines if f"waiting for {url}: " in line]
    assert retry_lines and all(re.search(r"[12]/3 attempts .*next_try=in \d+\.\d s", line) for line in retry_lines)
    assert not any("WARNING" in line or "retry" in line or "left the pool" in line for line in lines)


def test_bad_config_value_and_file(cli, problem: Path, tmp_path: Path) -> None:
    assert_clean_error(cli("prove", "x", "--max-rounds", "many"), "prove.max_rounds must be an integer")
    broken = tmp_path / "broken.toml"
    broken.write_text("[prove\n", encoding="utf-8")
    assert_clean_error(cli("prove", "x", "--config", str(broken)), "is not valid TOML")


def test_output_directory_must_exist(cli, tmp_path: Path) -> None:
    assert_clean_error(cli("prove", "x", "--out", str(tmp_path / "missing" / "run.jsonl")), "output directory does not exist")


@pytest.mark.slow
def test_prompt_longer_than_the_context_leaves_no_complete_output(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    long_problem = tmp_path / "long.txt"
    long_problem.write_text("Prove that the following holds. " + "x + " * 9000 + "x = x.", encoding="utf-8")
    out = tmp_path / "run.jsonl"
    result = cli("prove", "--problem-file", str(long_problem), "--engine", "transformers", "--out", str(out), "--max-tokens", "8")
    assert_clean_error(result, "the model's context holds 8192")
    assert not out.exists()


@pytest.mark.slow
def test_a_proof_too_long_for_vllm_is_refused_before_vllm_loads(cli, tmp_path: Path, problem: Path, embedded_checkpoint: str) -> None:
    proof = tmp_path / "proof.md"
    proof.write_text("x + " * 9000, encoding="utf-8")
    result = cli("verify", "--problem", str(problem), "--proof", str(proof), "--engine", "vllm")
    assert_clean_error(result, "the model's context holds 8192")
    assert result.stderr.count("\n") == 1  # refused by the tokenizer: no engine started, nothing else said


def test_debug_shows_the_traceback(cli, tmp_path: Path) -> None:
    result = cli("prove", "--problem-file", str(tmp_path / "nope.txt"), "--debug")
    assert result.returncode != 0 and "Traceback" in result.stderr


@pytest.mark.parametrize(
    "command",
    [("prove", "x"), ("verify", "--problem", "P", "--proof", "P"), ("eval", "verifier", "P", "--out", "OUT"),
     ("eval", "prover", "P", "--out", "OUT"), ("train", "verifier", "--run-dir", "OUT")],
    ids=["prove", "verify", "eval-verifier", "eval-prover", "train"],
)
def test_a_prompts_dir_without_a_known_template_is_refused_before_anything_loads(
    cli, tmp_path: Path, problem: Path, command: tuple[str, ...]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "verifier.md").write_text("{{problem}}", encoding="utf-8")
    out = tmp_path / "out"
    argv = [str(problem) if part == "P" else str(out) if part == "OUT" else part for part in command]
    result = cli(*argv, "--prompts", str(prompts))
    assert_clean_error(result, f"prompts directory {prompts} has none of the templates generate.md")
    assert "it holds verifier.md" in result.stderr
    assert not out.exists()
