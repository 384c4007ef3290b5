"""``proofsmith label`` end to end on the embedded model: output, summary, kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.vllm_server import free_port

REPO = Path(__file__).resolve().parents[3]
SMALL = ("--engine", "transformers", "--n", "2", "--m", "1", "--k", "1", "--max-tokens", "24", "--seed", "0")


def write_input(tmp_path: Path, count: int, oversized: tuple[int, ...] = ()) -> Path:
    """``count`` short proofs; those at ``oversized`` are ~9000 tokens, beyond the model's context."""
    path = tmp_path / "proofs.jsonl"
    rows = [
        {"id": f"p{index}", "problem": f"Prove that {index} + {index} is even.",
         "proof": "Clearly. " * 4500 if index in oversized else f"{index} + {index} = 2 * {index}.",
         "score": [0, 0.5, 1][index % 3]}
        for index in range(count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_a_killed_run_resumes_without_losing_or_repeating_work(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    source = write_input(tmp_path, 5)
    out = tmp_path / "interrupted.jsonl"
    command = [sys.executable, "-m", "proofsmith", "label", str(source), "--out", str(out), "--chunk-size", "1", *SMALL]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 2):
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = out.read_bytes()
    kept = written[: written.rfind(b"\n") + 1].splitlines(keepends=True)  # whole lines only: a kill may cut the last
    assert 2 <= len(kept) < 5
    # Labeling is seeded by the proof's place in the input, so a resume that relabeled the kept proofs would write
    # the same bytes again. Kept in another (equally valid) JSON layout, the lines show whether they were rewritten.
    before = b"".join(json.dumps(json.loads(line), separators=(",", ":")).encode() + b"\n" for line in kept)
    assert before != b"".join(kept)
    out.write_bytes(before + b'{"id": "p4", "label": 1')  # and a line cut off mid-write

    result = cli("label", str(source), "--out", str(out), "--chunk-size", "1", "--json", *SMALL)
    assert result.returncode == 0, result.stderr
    resumed = records(out)
    assert len(resumed) == 5 and json.loads(result.stdout)["records"] == 5
    assert sorted(record["id"] for record in resumed) == [f"p{index}" for index in range(5)]
    assert out.read_bytes().startswith(before)  # the records of the killed run, untouched, then only the rest


def test_bad_rows_fail_before_any_model_call(cli, tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text('{"id": "a", "problem": "P", "proof": "Q"}\n{"id": "b", "problem": "P", "proof": ""}\n', encoding="utf-8")
    result = cli("label", str(source), "--out", str(tmp_path / "out.jsonl"), "--engine", "transformers", "--model", "./nowhere")
    assert result.returncode == 2
    assert "1 bad row(s)" in result.stderr and "line 2: empty field 'proof'" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_dead_server_stops_the_run_with_a_clear_error(cli, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = cli(
        "label", str(write_input(tmp_path, 2)), "--out", str(out), "--base-url", f"http://127.0.0.1:{free_port()}/v1",
        "--model", "m", "--max-retries", "1", "--set", "engine.retry_backoff_s=0.05",
    )
    assert result.returncode == 2 and "server unreachable after 2 attempts" in result.stderr.strip().splitlines()[-1]
    assert "Traceback" not in result.stderr
    assert out.read_text(encoding="utf-8") == ""


@pytest.mark.slow
def test_label_writes_one_record_per_proof_and_a_summary_and_records_an_oversized_proof(
    cli, tmp_path: Path, embedded_checkpoint: str
) -> None:
    out = tmp_path / "labeled.jsonl"
    result = cli("label", str(write_input(tmp_path, 3, oversized=(1,))), "--out", str(out), "--chunk-size", "2", "--json",
                 *SMALL)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["records"] == 3 and sum(summary["labels"].values()) == 3
    assert "human_agreement" in summary and summary["completion_tokens"] > 0
    by_id = {record["id"]: record for record in records(out)}
    assert by_id["p1"]["rule"] == "prompt-too-long" and by_id["p1"]["label"] is None
    assert "context holds 8192" in by_id["p1"]["error"]
    for record in (by_id["p0"], by_id["p2"]):  # the rest labeled
        assert record["label"] in (0, 0.5, 1, None) and record["rule"]
        assert len(record["analyses"]) == 2
        for analysis in record["analyses"]:
            flagged = analysis["score"] is not None and analysis["score"] < 1
            assert (len(analysis["meta"]) == 1) is flagged and (analysis["valid"] is not None) is flagged


@pytest.mark.slow
def test_label_through_a_real_server(cli, tmp_path: Path, vllm_server) -> None:
    out = tmp_path / "labeled.jsonl"
    result = cli(
        "label", str(write_input(tmp_path, 3, oversized=(2,))), "--out", str(out), "--base-url", vllm_server.base_url,
        "--n", "2", "--m", "1", "--k", "1", "--max-tokens", "24", "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["engine"] == "openai" and summary["records"] == 3 and summary["rules"]["prompt-too-long"] == 1
    by_id = {record["id"]: record for record in records(out)}
    assert "does not fit the model's context" in by_id["p2"]["error"]
    assert all(len(by_id[name]["analyses"]) == 2 for name in ("p0", "p1"))


# A server dying mid-run (finished records kept, resumed): tests/training/async_rl/test_async_train.py (one kill shared with the
# openai engine and async training).


def test_the_text_summary_says_how_far_the_labels_can_be_trusted(capsys: pytest.CaptureFixture[str]) -> None:
    from proofsmith.commands.label import print_summary

    summary = {"records": 4, "labels": {"0": 1, "1": 2, "unlabeled": 1}, "rules": {"no-issue": 2, "needs-human": 1,
               "k-confirmed-at-lowest": 1}, "completion_tokens": 90, "engine": "vllm", "model": "m", "bad_rows_skipped": 0,
               "human_agreement": {"labeled_with_human_score": 3, "exact": 2 / 3, "coverage": 0.75, "precision_of_1": 0.5,
                                   "flawed_labelled_1": None}}
    print_summary(summary, Path("labeled.jsonl"))
    shown = capsys.readouterr().out.splitlines()[-1]
    assert shown == ("agreement with human scores: 66.7% exact, over 3 labeled proofs with a human score (coverage 75.0%; "
                     "labelled 1 and truly 1: 50.0%; below 1 but labelled 1: n/a)")
