"""``eval prover`` pieces: marking one problem (grader, answer check, disagreements), the
score tables and metrics document on hand-made records, the written outputs, and
``prove_problem`` in refine and search mode, all with scripted engines."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from eval.benchmark_problems import BenchmarkProblem
from eval.prover_eval import (RIGHT_ANSWER_ZERO_MARK, WRONG_ANSWER_HIGH_MARK, evaluate_problem, metrics_document,
                              prove_problem, report_rows, score_table, summary_tables, write_outputs)
from generator.config import RefineConfig, SearchConfig

SAMPLING = SamplingConfig(temperature=0.0, max_tokens=64, seed=0)
PROBLEM = BenchmarkProblem("PB-Basic-001", "Find 8 times 8.", "It is 64.", "(Partial) Any product.", "$64$", "pre-IMO", "Algebra")
MARKING = "Here is my marking of the proof:\nChecked.\nFinal points:\n\\boxed{{{points}}}"
SELF_EVAL = ("Here is my evaluation of the solution:\nNo issues.\n"
             "Based on my evaluation, the final overall score should be: \\boxed{1}")


class ScriptedEngine:
    """Answers a request with ``n`` completions from ``answer(prompt)``, 10 tokens each.

    A prompt asked again gets the next answers of its list (cycling), so a search's one-sample
    requests for the proofs of a pool get the list's answers in slot order.
    """

    name = "scripted"
    model = "script"

    def __init__(self, answer: Callable[[str], list[str]]) -> None:
        self.answer = answer
        self.requests: list[GenerationRequest] = []
        self.answered: dict[str, int] = {}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.requests.extend(requests)
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            answers, start = self.answer(prompt), self.answered.get(prompt, 0)
            texts = [answers[(start + sample) % len(answers)] for sample in range(request.n)]
            self.answered[prompt] = start + request.n
            results.append(GenerationResult(tuple(Completion(text, "stop", 10) for text in texts), 30, 10 * len(texts), 0.0))
        return results

    def close(self) -> None:
        pass


def grader(*points: str) -> ScriptedEngine:
    return ScriptedEngine(lambda prompt: [MARKING.format(points=p) if p.isdigit() else p for p in points])


def proved(proof: str, tokens: int = 100) -> dict[str, Any]:
    return {"proof": proof, "self_score": 1.0, "verifier_mean": None, "format_errors": [], "rounds": 1,
            "completion_tokens": tokens, "prove_s": 0.0}


def evaluate(proof: str, engine: ScriptedEngine, problem: BenchmarkProblem = PROBLEM, samples: int = 1) -> dict[str, Any]:
    return evaluate_problem(problem, proved(proof), engine, samples, SAMPLING, None, 5.0)


def test_graded_proof_without_short_answer() -> None:
    engine = grader("7", "6", "7")
    plain = BenchmarkProblem("PB-Basic-002", "Prove P.", level="IMO-easy", category="Geometry")
    record = evaluate("A full proof.", engine, plain, samples=3)
    assert (record["points"], record["graded"], record["grade"]["samples"]) == (7, True, [7, 6, 7])
    assert [request.n for request in engine.requests] == [3]
    assert "<proof>\nA full proof.\n</proof>" in engine.requests[0].messages[-1].content
    assert record["short_answer"] is None and record["answer_check"] is None and record["disagreement"] is None
    assert (record["id"], record["level"], record["category"]) == ("PB-Basic-002", "IMO-easy", "Geometry")


def test_empty_proof_scores_zero_without_calling_the_grader() -> None:
    engine = grader("7")
    record = evaluate("  \n", engine)
    assert engine.requests == []
    assert (record["points"], record["graded"], record["grade"]["no_proof"]) == (0, True, True)
    assert record["answer_check"]["equivalent"] is None  # no boxed answer: undecided
    assert record["disagreement"] is None


@pytest.mark.parametrize(
    "proof, points, equivalent, disagreement",
    [
        pytest.param("8 * 8 = 64, so \\boxed{64}", "7", True, None, id="right-and-passed"),
        pytest.param("8 * 8 = 65, so \\boxed{65}", "7", False, WRONG_ANSWER_HIGH_MARK, id="wrong-marked-7"),
        pytest.param("8 * 8 = 65, so \\boxed{65}", "6", False, WRONG_ANSWER_HIGH_MARK, id="wrong-marked-6"),
        pytest.param("8 * 8 = 65, so \\boxed{65}", "1", False, None, id="wrong-marked-1"),
        pytest.param("Guess: \\boxed{64}", "0", True, RIGHT_ANSWER_ZERO_MARK, id="right-marked-0"),
    ],
)
def test_answer_check_and_disagreement(proof: str, points: str, equivalent: bool, disagreement: str | None) -> None:
    record = evaluate(proof, grader(points))
    assert record["points"] == int(points)
    assert record["short_answer"] == "$64$"
    assert record["answer_check"]["equivalent"] is equivalent
    assert record["answer_check"]["answer"] == proof.rsplit("{", 1)[1].rstrip("}")
    assert record["disagreement"] == disagreement


def test_grader_format_failure_leaves_the_proof_ungraded() -> None:
    record = evaluate("8 * 8 = 65, so \\boxed{65}", grader("I would give it full marks."))
    assert (record["points"], record["graded"]) == (None, False)
    assert record["grade"]["samples"] == [None]
    assert record["answer_check"]["equivalent"] is False
    assert record["disagreement"] is None  # no points, so nothing to disagree with


def record(name: str, level: str, category: str, points: int | None, tokens: int, proof: str = "p",
           short_answer: str | None = None, equivalent: bool | None = None, answer: str | None = None,
           disagreement: str | None = None, truth: dict[str, Any] | None = None) -> dict[str, Any]:
    check = None if short_answer is None else {"equivalent": equivalent, "answer": answer, "method": "math",
                                               "reason": "", "answer_form": answer, "reference_form": short_answer}
    return {"id": name, "level": level, "category": category, "source": "", "points": points,
            "graded": points is not None, **proved(proof, tokens),
            "grade": {"points": points, "samples": [points, None], "refused": None, "markings": []}, "grade_s": 0.0,
            "short_answer": short_answer, "answer_check": check, "disagreement": disagreement, "truth": truth}


# Totals: 5 problems, 4 graded, points 7 + 1 + 0 + 6 = 14 of 28 (50%).
RECORDS = [
    record("r1", "IMO-easy", "Algebra", 7, 100, short_answer="2", equivalent=True, answer="2"),
    record("r2", "IMO-hard", "Algebra", 1, 200),
    record("r3", "IMO-easy", "Geometry", None, 300),
    record("r4", "", "Geometry", 0, 400, proof="", short_answer="3", equivalent=None),
    record("r5", "IMO-hard", "Algebra", 6, 500, short_answer="5", equivalent=False, answer="4",
           disagreement=WRONG_ANSWER_HIGH_MARK),
]


def test_hand_made_records_have_the_keys_of_evaluate_problem() -> None:
    assert set(RECORDS[0]) == set(evaluate("\\boxed{64}", grader("7")))


def test_total_scores() -> None:
    assert summary_tables(RECORDS)["total"] == [{
        "problems of": "all", "problems": 5, "graded": 4, "ungraded": 1, "points": 14, "max_points": 28,
        "percent": 50.0, "full_marks": 1, "no_proof": 1, "with_short_answer": 3, "answer_checked": 2,
        "answer_correct": 1, "disagreements": 1,
    }]


WORLD_PROBLEM = BenchmarkProblem("w1", "Prove that (3a + 2b)^2 - (3a - 2b)^2 = 24ab.", category="identity",
                                 goal=("(3a + 2b)^2 - (3a - 2b)^2 = 24ab",))
TRUE_PROOF = ("Step 1: We have (3a + 2b)^2 - (3a - 2b)^2 = 9a^2 + 12ab + 4b^2 - (9a^2 - 12ab + 4b^2) (by expanding).\n"
              "Step 2: It follows that 9a^2 + 12ab + 4b^2 - (9a^2 - 12ab + 4b^2) = 24ab.")
WRONG_PROOF = TRUE_PROOF.replace("12ab + 4b^2 -", "10ab + 4b^2 -")  # a wrong expansion at step 1


@pytest.mark.parametrize(("proof", "score", "first_bad_step", "readable"), [
    (TRUE_PROOF, 1.0, None, True),
    (TRUE_PROOF.replace("12ab + 4b^2 -", "10ab + 4b^2 -"), 0.0, 1, True),  # a wrong expansion at step 1
    (TRUE_PROOF.replace(" (by expanding)", ""), 0.5, 1, True),  # the expansion stated without a reason
    ("The identity is clear by symmetry.", 0.0, None, False),  # no step the checker can read: wrong, and counted
])
def test_a_world_problem_gets_the_checkers_verdict_beside_the_grade(proof: str, score: float, first_bad_step: int | None,
                                                                   readable: bool) -> None:
    truth = evaluate(proof, grader("7"), WORLD_PROBLEM)["truth"]
    assert (truth["score"], truth["first_bad_step"], truth["readable"]) == (score, first_bad_step, readable)
    assert evaluate(proof, grader("7"))["truth"] is None  # a problem without a goal has no truth


def test_the_true_pass_rate_counts_unreadable_proofs_as_failures() -> None:
    truths = [{"score": 1.0, "first_bad_step": None, "readable": True, "reason": ""},
              {"score": 0.5, "first_bad_step": 2, "readable": True, "reason": ""},
              {"score": 0.0, "first_bad_step": None, "readable": False, "reason": ""}]
    records = [record(f"w{index}", "", "identity", 7, 10, truth=truth) for index, truth in enumerate(truths)]
    total = summary_tables([*records, RECORDS[0]])["total"][0]
    assert {key: total[key] for key in ("truth_checked", "true_pass", "true_pass_rate", "true_mean_score", "unreadable")} == {
        "truth_checked": 3, "true_pass": 1, "true_pass_rate": 0.3333, "true_mean_score": 0.5, "unreadable": 1}
    assert "truth_checked" not in summary_tables(RECORDS)["total"][0]
    assert report_rows(records)[1]["true score"] == 0.5 and "true score" not in report_rows(RECORDS)[0]


def test_groups_in_order_of_first_appearance() -> None:
    tables = summary_tables(RECORDS)
    by_level = [(row["level"], row["problems"], row["graded"], row["points"], row["percent"]) for row in tables["by level"]]
    assert by_level == [("IMO-easy", 2, 1, 7, 100.0), ("IMO-hard", 2, 2, 7, 50.0), ("(none)", 1, 1, 0, 0.0)]
    by_category = [(row["category"], row["ungraded"], row["max_points"], row["percent"]) for row in tables["by category"]]
    assert by_category == [("Algebra", 0, 21, 66.67), ("Geometry", 1, 7, 0.0)]


def test_all_ungraded_group_has_no_percent() -> None:
    row = score_table([record("x", "IMO-easy", "", None, 1)], lambda r: r["level"], "level")[0]
    assert (row["graded"], row["ungraded"], row["points"], row["max_points"], row["percent"]) == (0, 1, 0, 0, None)


def test_metrics_document() -> None:
    document = metrics_document(RECORDS, {"model": "m"}, {"problems read": 5})
    assert document["settings"] == {"model": "m"} and document["counts"] == {"problems read": 5}
    assert document["total"][0]["percent"] == 50.0
    assert [row["level"] for row in document["by_level"]] == ["IMO-easy", "IMO-hard", "(none)"]
    assert [row["category"] for row in document["by_category"]] == ["Algebra", "Geometry"]
    assert document["disagreements"] == [{"id": "r5", "kind": WRONG_ANSWER_HIGH_MARK, "points": 6, "answer": "4",
                                          "short_answer": "5"}]
    assert document["mean_completion_tokens"] == 300.0
    assert metrics_document([], {}, {})["mean_completion_tokens"] is None


def test_report_rows() -> None:
    rows = report_rows(RECORDS)
    assert list(rows[0]) == ["id", "level", "category", "points", "grader samples", "self score", "verifier mean",
                             "rounds", "short answer", "final answer", "answer correct", "disagreement", "tokens"]
    assert rows[0]["grader samples"] == "7, n/a"
    assert (rows[0]["final answer"], rows[0]["answer correct"], rows[0]["tokens"]) == ("2", True, 100)
    assert (rows[1]["short answer"], rows[1]["final answer"], rows[1]["answer correct"]) == (None, None, None)
    assert rows[4]["disagreement"] == WRONG_ANSWER_HIGH_MARK


def test_write_outputs(tmp_path: Path) -> None:
    document = write_outputs(tmp_path, RECORDS, {"grader_samples": 2}, {"problems_read": 5})
    written = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert written == document
    assert {"total", "by_level", "by_category"} <= set(written)
    assert written["total"][0]["points"] == 14
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    for table_id in ("summary-total", "summary-by-level", "summary-by-category", "rows"):
        assert f'<table id="{table_id}">' in page
    assert "<td>grader samples</td>" in page and "<td>problems read</td>" in page


def generator_answer(prompt: str) -> list[str]:
    """Generation prompts get a careless and a careful proof; the verifier passes only the careful one."""
    if prompt.startswith("Solve the problem below"):
        return [f"## Solution\n{kind} 8 * 8 = 64, so \\boxed{{64}}.\n\n## Self Evaluation\n{SELF_EVAL}"
                for kind in ("Careless:", "Careful:")]
    if prompt.startswith("You are grading a proof"):
        score = "1" if "Careful:" in prompt else "0.5"
        return [f"Here is my evaluation of the solution:\nFine.\n"
                f"Based on my evaluation, the final overall score should be: \\boxed{{{score}}}"]
    raise AssertionError(f"unexpected prompt: {prompt[:60]}")


def test_prove_problem_refine_mode(tmp_path: Path) -> None:
    engine = ScriptedEngine(generator_answer)
    result = prove_problem(engine, PROBLEM, "refine", RefineConfig(max_rounds=1), SearchConfig(), SAMPLING,
                           tmp_path / "search", None)
    assert result["proof"] == "Careless: 8 * 8 = 64, so \\boxed{64}."
    assert (result["self_score"], result["verifier_mean"], result["rounds"]) == (1.0, None, 1)
    assert (result["format_errors"], result["completion_tokens"]) == ([], 10)
    assert len(engine.requests) == 1
    assert not (tmp_path / "search").exists()


def test_a_world_problem_in_refine_mode_records_the_truth_after_every_round_budget(tmp_path: Path) -> None:
    # Round 1 writes a wrong expansion and grades it 0; round 2 (a refinement) the true proof, graded 1, and stops.
    def answer(prompt: str) -> list[str]:
        proof, self_score = (TRUE_PROOF, "1") if "Earlier attempt" in prompt else (WRONG_PROOF, "0")
        return [f"## Solution\n{proof}\n\n## Self Evaluation\n" + SELF_EVAL.replace("\\boxed{1}", f"\\boxed{{{self_score}}}")]

    result = prove_problem(ScriptedEngine(answer), WORLD_PROBLEM, "refine", RefineConfig(max_rounds=3), SearchConfig(), SAMPLING,
                           tmp_path / "search", None)
    assert result["proof"] == TRUE_PROOF and result["true_score_by_round"] == [0.0, 1.0, 1.0]
    truth = {"first_bad_step": None, "readable": True, "reason": ""}
    records = [{**record(f"w{index}", "", "identity", 7, 10, truth={**truth, "score": scores[-1]}), "true_score_by_round": scores}
               for index, scores in enumerate(([0.0, 1.0, 1.0], [0.0, 0.0, 0.5]))]
    assert summary_tables(records)["total"][0]["true_pass_rate_by_round"] == {"1": 0.0, "2": 0.5, "3": 0.5}
    assert "true_pass_rate_by_round" not in summary_tables(RECORDS)["total"][0]


def test_prove_problem_search_mode(tmp_path: Path) -> None:
    engine = ScriptedEngine(generator_answer)
    search_dir = tmp_path / "search" / "PB-Basic-001"
    settings = SearchConfig(pool=2, verify_samples=1, top_k=1, rounds=0)
    result = prove_problem(engine, PROBLEM, "search", RefineConfig(), settings, SAMPLING, search_dir, None)
    assert result["proof"] == "Careful: 8 * 8 = 64, so \\boxed{64}."
    assert (result["self_score"], result["verifier_mean"], result["rounds"]) == (1.0, 1.0, 1)
    # Two generations of 10 tokens, each verified once for 10 more.
    assert result["completion_tokens"] == 40
    assert [request.n for request in engine.requests] == [1, 1, 1, 1]  # one request per proof, one per verification
    pool = [json.loads(line) for line in (search_dir / "pool.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [entry["scores"] for entry in pool] == [[0.5], [1.0]]
    assert json.loads((search_dir / "state.json").read_text(encoding="utf-8")) == {"completed_rounds": 1}


def test_a_world_problem_in_search_mode_records_the_truth_of_its_whole_pool(tmp_path: Path) -> None:
    # A pool of three: two wrong expansions and the true proof; the verifier scores the wrong ones 1 and the true one 0,
    # so its pick is wrong while a random pool proof is true a third of the time.
    def answer(prompt: str) -> list[str]:
        if prompt.startswith("Solve the problem below"):
            return [f"## Solution\n{proof}\n\n## Self Evaluation\n{SELF_EVAL}" for proof in (WRONG_PROOF, TRUE_PROOF, WRONG_PROOF + " ")]
        score = "0" if TRUE_PROOF in prompt else "1"
        return [f"Here is my evaluation of the solution:\nFine.\nBased on my evaluation, the final overall score should be: \\boxed{{{score}}}"]

    settings = SearchConfig(pool=3, verify_samples=1, top_k=1, rounds=0)
    result = prove_problem(ScriptedEngine(answer), WORLD_PROBLEM, "search", RefineConfig(), settings, SAMPLING,
                           tmp_path / "search", None)
    assert result["proof"].strip() == WRONG_PROOF and result["pool_true_scores"] == [0.0, 1.0, 0.0]
    truth = {"first_bad_step": 1, "readable": True, "reason": ""}
    records = [{**record(f"w{index}", "", "identity", 0, 10, truth={**truth, "score": 0.0}), "pool_true_scores": scores}
               for index, scores in enumerate(([0.0, 1.0, 0.0], [0.0, 0.0, 0.5, 0.0]))]
    total = summary_tables(records)["total"][0]
    assert (total["true_pass_rate"], total["pool_problems"], total["pool_proofs"]) == (0.0, 2, 7)
    assert (total["true_pool_pass_rate"], total["true_pool_any_pass"]) == (round((1 / 3 + 0) / 2, 4), 0.5)
    assert "true_pool_pass_rate" not in summary_tables(RECORDS)["total"][0]


def test_problems_searched_together_get_what_each_alone_gets_from_shared_engine_calls(tmp_path: Path) -> None:
    from eval.prover_eval import prove_problems_by_search

    def answer(prompt: str) -> list[str]:  # a refinement prompt gets the careful proof
        return generator_answer("Solve the problem below")[1:] if prompt.startswith("Below are a problem") else generator_answer(prompt)

    other = BenchmarkProblem("PB-Basic-002", "Find 8 times 8 again.")
    settings = SearchConfig(pool=2, verify_samples=1, top_k=1, rounds=1, stop_at_full_pass=False)
    engine = ScriptedEngine(answer)
    together = prove_problems_by_search(engine, [PROBLEM, other], settings, SAMPLING,
                                        [tmp_path / "joint" / "a", tmp_path / "joint" / "b"], None)
    alone = [prove_problem(ScriptedEngine(answer), problem, "search", RefineConfig(), settings, SAMPLING,
                           tmp_path / "alone" / name, None) for problem, name in ((PROBLEM, "a"), (other, "b"))]
    for joint, single in zip(together, alone):
        assert {key: value for key, value in joint.items() if key not in ("prove_s", "searched_together")} == \
               {key: value for key, value in single.items() if key != "prove_s"}
        assert joint["searched_together"] == 2
    # Round 0: both problems' four proofs in one call, then their four verifications; round 1: 2 refinements, 2 verifications.
    assert len(engine.requests) == 12 and {request.n for request in engine.requests} == {1}
