"""One benchmark problem end to end (prove, mark, check the answer), and the scores of a run.

Contract:

* :func:`prove_problem` makes one final proof with ``prove`` (sequential refinement) or
  ``prove --search`` (the pool search, resumable in its own folder), exactly as those
  commands do; :func:`prove_problems_by_search` searches many problems together through
  one engine, as ``prove --search --problems`` does; :func:`evaluate_problem` then marks it with the grader and, when the
  problem has a short answer, compares the proof's last ``\\boxed{}`` with it (sympy).
* A problem whose run produced no proof scores 0 points without a grader call (there is
  nothing to mark); a proof the grader could not mark is *ungraded*: it is left out of
  the percentage and counted, never scored 0.
* A problem of the ground-truth world (it has a ``goal``) also gets the checker's verdict on
  the proof (``truth``: score 0 / 0.5 / 1, first bad step, whether any step could be read),
  reported beside the grader's points as the *true pass rate* (share of problems whose
  proof the checker scores 1). A proof without one readable step scores 0 and is counted as
  unreadable, never dropped.
* Scores follow IMO-ProofBench: points out of 7 per problem, totals as % of the maximum,
  per level and per category. The answer check is reported beside them, never mixed in;
  two kinds of disagreement with the grader are counted: a wrong final answer marked 6
  or 7 (the grader passed a proof with the wrong result), and a right answer marked 0 (a
  possible miss: the guidelines often give a correct answer 1 point).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from engine.base import Engine
from engine.config import SamplingConfig
from eval.answer_check import check_proof_answer
from eval.benchmark_problems import BenchmarkProblem
from data.atomic import write_text_atomic
from eval.grader import MAX_POINTS, ToGrade, grade_proofs
from eval.report import write_prover_report
from generator.config import RefineConfig, SearchConfig

METRICS_NAME = "metrics.json"
WRONG_ANSWER_HIGH_MARK = "wrong answer, marked 6-7"
RIGHT_ANSWER_ZERO_MARK = "right answer, marked 0"


def prove_problem(engine: Engine, problem: BenchmarkProblem, mode: str, refine: RefineConfig, search_settings: SearchConfig,
                  sampling: SamplingConfig, search_dir: Path, prompts_dir: str | None) -> dict[str, Any]:
    """The final proof of one problem and how it was reached."""
    started = time.perf_counter()
    alternatives: dict[str, list[float]] = {}  # world problems: the true score of the proofs the run could have returned
    if mode == "search":
        from generator.search import search

        search_dir.mkdir(parents=True, exist_ok=True)
        pool = search(engine, problem.problem, search_settings, sampling, search_dir, prompts_dir)
        return searched(problem, pool, search_settings, time.perf_counter() - started)
    else:
        from generator.refine import refine as run_refine

        result = run_refine(engine, problem.problem, refine, sampling, prompts_dir)
        final = result.final_proof()
        if problem.goal:  # the checker also judges the proof each smaller round budget would have returned
            proofs = [result.proof_after(rounds) for rounds in range(1, refine.max_rounds + 1)]
            judged = {proof: world_truth(problem.goal, proof)["score"] for proof in set(proofs)}  # budgets share proofs
            alternatives = {"true_score_by_round": [judged[proof] for proof in proofs]}
    return {**final.to_dict(), **alternatives, "prove_s": round(time.perf_counter() - started, 2)}


def prove_problems_by_search(engine: Engine, problems: Sequence[BenchmarkProblem], search_settings: SearchConfig,
                             sampling: SamplingConfig, search_dirs: Sequence[Path], prompts_dir: str | None,
                             on_round: Callable[[str, int, list[Any]], None] | None = None) -> list[dict[str, Any]]:
    """:func:`prove_problem` in search mode for many problems at once, through one engine (``generator.search_many``).

    Each problem's pool lives in its own directory and resumes as alone; ``prove_s`` is the joint search's wall time.
    """
    from generator.search_many import SearchTask, search_many

    started = time.perf_counter()
    tasks = [SearchTask(problem.id, problem.problem, directory) for problem, directory in zip(problems, search_dirs, strict=True)]
    pools = search_many(engine, tasks, search_settings, sampling, prompts_dir, on_round)
    elapsed = time.perf_counter() - started
    return [{**searched(problem, pools[problem.id], search_settings, elapsed), "searched_together": len(problems)}
            for problem in problems]


def searched(problem: BenchmarkProblem, pool: Sequence[Any], search_settings: SearchConfig, prove_s: float) -> dict[str, Any]:
    """The record fields of a finished search: its final proof, and for a world problem the checker's view of the pool."""
    from generator.search import final_proof

    final = final_proof(list(pool), search_settings)
    alternatives: dict[str, list[float]] = {}
    if problem.goal:  # the checker judges every pool proof: what picking one without the verifier would give
        judged = {proof: world_truth(problem.goal, proof)["score"] for proof in {candidate.proof for candidate in pool}}
        alternatives = {"pool_true_scores": [judged[candidate.proof] for candidate in pool]}
    return {**final.to_dict(), **alternatives, "prove_s": round(prove_s, 2)}


def _disagreement(points: int | None, equivalent: bool | None) -> str | None:
    if points is None or equivalent is None:
        return None
    if equivalent is False and points >= 6:
        return WRONG_ANSWER_HIGH_MARK
    if equivalent is True and points == 0:
        return RIGHT_ANSWER_ZERO_MARK
    return None


def evaluate_problem(problem: BenchmarkProblem, proved: Mapping[str, Any], grader: Engine, grader_samples: int,
                     grader_sampling: SamplingConfig, prompts_dir: str | None, answer_time_limit: float) -> dict[str, Any]:
    """The per-problem record: identity, the proof, its marking, the answer check."""
    proof = proved["proof"]
    started = time.perf_counter()
    if proof.strip():
        grade = grade_proofs(grader, [ToGrade(problem.problem, problem.reference_solution, problem.guidelines, proof)],
                             grader_samples, grader_sampling, prompts_dir)[0]
        points, marking = grade.points, grade.to_dict()
    else:
        points, marking = 0, {"points": 0, "samples": [], "refused": None, "markings": [], "no_proof": True}
    check = check_proof_answer(proof, problem.short_answer, answer_time_limit) if problem.short_answer else None
    truth = world_truth(problem.goal, proof) if problem.goal else None
    equivalent = check.equivalent if check else None
    return {
        "id": problem.id, "level": problem.level, "category": problem.category, "source": problem.source,
        "points": points, "graded": points is not None, **proved,
        "grade": marking, "grade_s": round(time.perf_counter() - started, 2),
        "short_answer": problem.short_answer or None,
        "answer_check": None if check is None else {
            "equivalent": check.equivalent, "answer": check.answer, "method": check.method, "reason": check.reason,
            "answer_form": check.answer_form, "reference_form": check.reference_form,
        },
        "disagreement": _disagreement(points, equivalent),
        "truth": truth,
    }


def world_truth(goal: Sequence[str], proof: str) -> dict[str, Any]:
    """The world checker's verdict on ``proof`` against the claims of ``goal``."""
    from data.world.checker import check_goal

    verdict = check_goal(goal, proof)
    return {"score": verdict.score, "first_bad_step": verdict.first_bad_step, "readable": verdict.readable,
            "reason": verdict.reason}


def score_table(records: Sequence[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], str], label: str) -> list[dict[str, Any]]:
    """One row per group (in order of first appearance): problems, points, % of maximum, answers, disagreements."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(key(record) or "(none)", []).append(record)
    return [{label: name, **_scores(members)} for name, members in groups.items()]


def _scores(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    graded = [record for record in records if record["points"] is not None]
    points = sum(record["points"] for record in graded)
    checked = [record for record in records if record["answer_check"] and record["answer_check"]["equivalent"] is not None]
    return {
        "problems": len(records), "graded": len(graded), "ungraded": len(records) - len(graded),
        "points": points, "max_points": MAX_POINTS * len(graded),
        "percent": round(100 * points / (MAX_POINTS * len(graded)), 2) if graded else None,
        "full_marks": sum(1 for record in graded if record["points"] == MAX_POINTS),
        "no_proof": sum(1 for record in records if not record["proof"].strip()),
        "with_short_answer": sum(1 for record in records if record["short_answer"]),
        "answer_checked": len(checked),
        "answer_correct": sum(1 for record in checked if record["answer_check"]["equivalent"]),
        "disagreements": sum(1 for record in records if record["disagreement"]),
        **_true_scores(records),
    }


def _true_scores(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The checker's pass rate over the problems that have a truth (none of these keys without one)."""
    truths = [record["truth"] for record in records if record.get("truth")]
    if not truths:
        return {}
    passed = sum(truth["score"] == 1.0 for truth in truths)
    by_round = [record["true_score_by_round"] for record in records if record.get("true_score_by_round")]
    rounds = min((len(scores) for scores in by_round), default=0)
    return {
        "truth_checked": len(truths), "true_pass": passed, "true_pass_rate": round(passed / len(truths), 4),
        "true_mean_score": round(fmean(truth["score"] for truth in truths), 4),
        "unreadable": sum(not truth["readable"] for truth in truths),
        # refine mode: the pass rate had every run stopped after 1, 2, ... rounds (over the problems that record it)
        **({"true_pass_rate_by_round": {str(r): round(fmean(scores[r - 1] == 1.0 for scores in by_round), 4)
                                        for r in range(1, rounds + 1)}} if rounds else {}),
        **_pool_scores(records),
    }


def _pool_scores(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Search mode: the verifier's pick against the same pool without it (over the problems that record a pool).

    ``true_pool_pass_rate`` is the pass rate of one pool proof drawn at random (per problem, the share of its pool the
    checker passes), the baseline the verifier's selection (``true_pass_rate``) must beat; ``true_pool_any_pass`` is the
    share of problems whose pool holds a true proof at all, what a perfect selector would reach.
    """
    pools = [record["pool_true_scores"] for record in records if record.get("truth") and record.get("pool_true_scores")]
    if not pools:
        return {}
    return {"pool_problems": len(pools), "pool_proofs": sum(len(scores) for scores in pools),
            "true_pool_pass_rate": round(fmean(fmean(score == 1.0 for score in scores) for scores in pools), 4),
            "true_pool_any_pass": round(fmean(any(score == 1.0 for score in scores) for scores in pools), 4)}


def summary_tables(records: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {
        "total": score_table(records, lambda record: "all", "problems of"),
        "by level": score_table(records, lambda record: record["level"], "level"),
        "by category": score_table(records, lambda record: record["category"], "category"),
    }


def report_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-problem table of the report (the proof itself stays in items.jsonl)."""
    rows = []
    for record in records:
        check = record["answer_check"]
        rows.append({
            "id": record["id"], "level": record["level"], "category": record["category"], "points": record["points"],
            "grader samples": ", ".join("n/a" if points is None else str(points) for points in record["grade"]["samples"]),
            "self score": record["self_score"], "verifier mean": record["verifier_mean"], "rounds": record["rounds"],
            "short answer": record["short_answer"], "final answer": check["answer"] if check else None,
            "answer correct": None if check is None else check["equivalent"],
            "disagreement": record["disagreement"], "tokens": record["completion_tokens"],
            **({"true score": record["truth"]["score"], "first bad step": record["truth"]["first_bad_step"]}
               if record.get("truth") else {}),
        })
    return rows


def metrics_document(records: Sequence[Mapping[str, Any]], settings: Mapping[str, Any], counts: Mapping[str, Any]) -> dict[str, Any]:
    tables = summary_tables(records)
    return {
        "settings": dict(settings), "counts": dict(counts), **{name.replace(" ", "_"): table for name, table in tables.items()},
        "disagreements": [{"id": record["id"], "kind": record["disagreement"], "points": record["points"],
                           "answer": record["answer_check"]["answer"], "short_answer": record["short_answer"]}
                          for record in records if record["disagreement"]],
        "mean_completion_tokens": round(fmean(record["completion_tokens"] for record in records), 1) if records else None,
    }


def write_outputs(out_dir: Path, records: Sequence[Mapping[str, Any]], settings: Mapping[str, Any],
                  counts: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``metrics.json`` and ``report.html`` (each atomically) into ``out_dir``; returns the metrics document."""
    document = metrics_document(records, settings, counts)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / METRICS_NAME, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    shown = {key.replace("_", " "): value for key, value in {**settings, **counts}.items()}
    write_prover_report(out_dir, shown, summary_tables(records), report_rows(records), bar_column="percent")
    return document
