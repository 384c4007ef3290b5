"""``proofsmith prove --search --problems FILE``: bad input fails before a model loads; real runs on a server and in-process."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cli_checks import NO_MODEL, assert_clean_error

SAMPLE = Path(__file__).resolve().parents[1] / "eval" / "deepseek_math_v2_inputs.json"
TINY = ("--pool", "2", "--verify-samples", "2", "--top-k", "1", "--max-tokens", "64", "--seed", "0",
        "--stop-at-full-pass", "false")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "make, extra, fragment",
    [
        (lambda tmp: write(tmp, "p.json", json.dumps([{"id": 1, "question": "Q", "answer": "null", "problem_idx": "X-1"},
                                                      {"id": 2, "question": "Q2", "answer": None, "problem_idx": ""}])),
         (), "p.json: item 2 (2): field 'problem_idx' must be non-empty text"),
        (lambda tmp: write(tmp, "p.jsonl", '{"problem": "P"}\n{"id": "b"}\n'), (), "row at line 2: missing field 'problem'"),
        (lambda tmp: tmp / "missing.jsonl", (), "benchmark file not found"),
        (lambda tmp: write(tmp, "p.txt", "P"), (), "cannot tell the format"),
        (lambda tmp: SAMPLE, ("--problems-format", "xml"), "unknown benchmark format 'xml'"),
    ],
    ids=["deepseek-empty-idx", "jsonl-no-problem", "missing", "unknown-suffix", "unknown-format"],
)
def test_bad_problems_fail_before_a_model_loads(cli, tmp_path: Path, make, extra, fragment) -> None:
    out = tmp_path / "run"
    result = cli("prove", "--search", "--problems", str(make(tmp_path)), "--out", str(out), *extra, *NO_MODEL)
    assert_clean_error(result, fragment)
    assert not out.exists()


def test_problems_need_search_and_exclude_a_single_problem(cli, tmp_path: Path) -> None:
    assert_clean_error(cli("prove", "--problems", str(SAMPLE), *NO_MODEL), "--problems needs --search")
    assert_clean_error(cli("prove", "P", "--search", "--problems", str(SAMPLE), *NO_MODEL), "not both")


def test_dry_run_prints_the_config(cli, tmp_path: Path) -> None:
    result = cli("prove", "--search", "--problems", str(SAMPLE), "--out", str(tmp_path / "run"), "--pool", "3", "--dry-run",
                 *NO_MODEL)
    assert result.returncode == 0, result.stderr
    assert tomllib.loads(result.stdout)["search"]["pool"] == 3 and not (tmp_path / "run").exists()


def pool_ids(directory: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (directory / "pool.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_many_problems_through_a_real_server_count_every_token_and_resume(cli, tmp_path: Path, vllm_server) -> None:
    from engine.vllm_server import served_generation_tokens

    out = tmp_path / "run"
    # 32-token proofs (as in the lockstep test): what is counted here does not depend on how long the proofs are
    args = ("prove", "--search", "--problems", str(SAMPLE), "--base-url", vllm_server.base_url, "--out", str(out), "--json", *TINY,
            "--max-tokens", "32")
    before = served_generation_tokens(vllm_server.base_url)
    result = cli(*args, "--rounds", "1")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["engine"] == "openai" and [row["id"] for row in summary["problems"]] == ["IMO2099-1", "IMO2099-2"]
    # Exact per-completion counts (n = 2 requests ask for token ids): the pools add up to what the server generated.
    assert summary["completion_tokens"] == served_generation_tokens(vllm_server.base_url) - before
    assert not summary["tokens_estimated"]
    for row in summary["problems"]:
        directory = Path(row["directory"])
        assert json.loads((directory / "state.json").read_text()) == {"completed_rounds": 2}
        written = json.loads((directory / "result.json").read_text(encoding="utf-8"))
        assert written["completion_tokens"] == row["completion_tokens"] and written["tokens_estimated"] is False
        assert (directory / "problem.txt").exists() and row["pool_size"] == 3
    lines = [json.loads(line) for line in (out / "deepseek_outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["problem_idx"] for line in lines] == ["IMO2099-1", "IMO2099-2"]
    assert all(line["model_prediction"]["human_rating"] is None for line in lines)

    kept = {row["id"]: pool_ids(Path(row["directory"])) for row in summary["problems"]}
    before = served_generation_tokens(vllm_server.base_url)
    result = cli(*args, "--rounds", "2")  # each problem continues where it stopped
    assert result.returncode == 0, result.stderr
    again = json.loads(result.stdout)
    for row in again["problems"]:
        ids = pool_ids(Path(row["directory"]))
        assert ids[: len(kept[row["id"]])] == kept[row["id"]] and len(ids) == len(kept[row["id"]]) + 1
    assert again["completion_tokens"] - summary["completion_tokens"] == served_generation_tokens(vllm_server.base_url) - before


@pytest.mark.slow
def test_lockstep_through_a_real_server(tmp_path: Path, vllm_server) -> None:
    """The lockstep driver (what in-process engines get) on a real engine: every problem's round in one call each step.

    (The in-process transformers engine runs the same driver through the CLI: the next test.)
    """
    from engine.config import EngineConfig, SamplingConfig
    from engine.openai_backend import OpenAIEngine
    from engine.vllm_server import served_generation_tokens
    from eval.benchmark_problems import read_benchmark_problems
    from generator.config import SearchConfig
    from generator.search_many import SearchTask, search_many

    class Counting(OpenAIEngine):
        def __init__(self) -> None:
            super().__init__(EngineConfig(backend="openai", base_urls=[vllm_server.base_url]))
            self.calls: list[int] = []

        def generate(self, requests):  # type: ignore[no-untyped-def]
            self.calls.append(len(requests))
            return super().generate(requests)

    engine = Counting()
    tasks = [SearchTask(problem.id, problem.problem, tmp_path / problem.id) for problem in read_benchmark_problems(SAMPLE)]
    config = SearchConfig(pool=2, verify_samples=2, top_k=1, rounds=1, stop_at_full_pass=False)
    before = served_generation_tokens(vllm_server.base_url)
    pools = search_many(engine, tasks, config, SamplingConfig(max_tokens=32, seed=0), per_problem_tasks=False)
    with_proof = [sum(1 for c in pools[task.id] if c.proof and c.round == 0) for task in tasks]
    # Both problems' requests in each call: round 0's proofs (one one-sample request each), then their verifications.
    assert engine.calls[:2] == [len(tasks) * config.pool, sum(with_proof)] and len(engine.calls) <= 4
    counted = sum(c.completion_tokens for pool in pools.values() for c in pool)
    assert counted == served_generation_tokens(vllm_server.base_url) - before
    assert all(json.loads((task.directory / "state.json").read_text()) == {"completed_rounds": 2} for task in tasks)


def test_eval_prover_writes_deepseek_outputs_that_read_back(cli, tmp_path: Path) -> None:
    from eval.human_grades import read_human_grades

    out = tmp_path / "run"
    base = ("eval", "prover", str(SAMPLE), "--out", str(out), *NO_MODEL)
    assert cli(*base, "--dry-run").returncode == 0
    records = [{"id": problem_id, "level": "", "category": "", "source": "IMO2099", "points": points, "graded": True,
                "proof": f"Proof of {problem_id}.", "self_score": 1.0, "verifier_mean": mean, "format_errors": [], "rounds": 1,
                "completion_tokens": 50, "prove_s": 1.0, "grade": {"points": points, "samples": [points], "refused": None,
                                                                   "markings": []},
                "grade_s": 1.0, "short_answer": None, "answer_check": None, "disagreement": None,
                "prover": {"engine": "openai", "model": "m"}, "grader": {"engine": "openai", "model": "m"}}
               for problem_id, points, mean in (("IMO2099-1", 7, 1.0), ("IMO2099-2", 1, 0.25))]
    (out / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = cli(*base, "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (out / "deepseek_outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [list(line) for line in lines] == [["question", "problem_idx", "model_prediction"]] * 2
    assert [line["model_prediction"]["human_rating"] for line in lines] == [7, 1]
    grades = read_human_grades(out / "deepseek_outputs.jsonl", "deepseek-math-v2", "partial-half")
    assert [(grade.id, grade.human_score, grade.source_fields["average_automatic_rating"]) for grade in grades] == [
        ("IMO2099-1", 1.0, 1.0), ("IMO2099-2", 0.5, 0.25)]


@pytest.mark.slow
def test_many_problems_on_an_in_process_engine_advance_in_lockstep(cli, tmp_path: Path) -> None:
    """The transformers engine through the CLI: both problems searched in one process, each in its own folder."""
    out = tmp_path / "search"
    result = cli("prove", "--search", "--problems", str(SAMPLE), "--engine", "transformers", "--pool", "2",
                 "--verify-samples", "1", "--top-k", "1", "--rounds", "1", "--max-tokens", "24", "--seed", "0",
                 "--stop-at-full-pass", "false", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["engine"] == "transformers" and [row["id"] for row in summary["problems"]] == ["IMO2099-1", "IMO2099-2"]
    for row in summary["problems"]:
        folder = Path(row["directory"])
        assert json.loads((folder / "state.json").read_text()) == {"completed_rounds": 2}
        assert len(pool_ids(folder)) >= 2 and (folder / "result.json").exists()
    assert len((out / "deepseek_outputs.jsonl").read_text().splitlines()) == 2
