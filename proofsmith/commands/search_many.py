"""``proofsmith prove --search --problems FILE``: many problems' searches through one engine.

Order of work: read and check every problem (a bad row fails here, before any model loads);
``--dry-run`` prints the config and stops; then ``OUT/config.toml``, one folder per problem
(``OUT/<id>/``: ``problem.txt``, ``pool.jsonl``, ``state.json``, ``result.json``, exactly as
one ``prove --search`` writes them), the engine opened once, every problem searched together
(``generator.search_many``), and last ``OUT/deepseek_outputs.jsonl`` (DeepSeekMath-V2's output
shape, ``eval.deepseek_outputs``). A rerun with the same ``--out`` resumes each problem where
it stopped. ``elapsed_s`` in each ``result.json`` is the wall time of the joint run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.errors import InputError
from engine.progress import Progress
from proofsmith.commands.common import engine_record, open_engine
from proofsmith.commands.search import run_directory, write_result
from proofsmith.config import Config, to_toml
from proofsmith.run_files import safe_name
from proofsmith.workloads import search_workload

if TYPE_CHECKING:
    from eval.benchmark_problems import BenchmarkProblem


def read_problems(path: str, format_name: str = "") -> list[BenchmarkProblem]:
    """Every problem of ``path``, checked; InputError names the first bad row."""
    from eval.benchmark_problems import read_benchmark_problems

    problems = read_benchmark_problems(path, format_name)
    if not problems:
        raise InputError(f"no problems in {path}")
    return problems


def run_search_many(args: argparse.Namespace, config: Config, problems: list[BenchmarkProblem]) -> int:
    from eval.deepseek_outputs import OUTPUTS_NAME, FinalRecord, write_outputs
    from generator.prompt import generation_messages
    from generator.search import final_proof
    from generator.search_many import SearchTask, rounds_left, search_many

    out = run_directory(args.out)
    settings = config.search
    (out / "config.toml").write_text(to_toml(config), encoding="utf-8")
    tasks = [SearchTask(problem.id, problem.problem, out / safe_name(problem.id)) for problem in problems]
    for task in tasks:
        task.directory.mkdir(exist_ok=True)
        (task.directory / "problem.txt").write_text(task.problem, encoding="utf-8")
    started = time.perf_counter()
    first_prompts = [generation_messages(problem.problem, config.prompts_dir or None) for problem in problems]
    engine = open_engine(config, search_workload(settings, config.sampling.max_tokens, len(problems)), first_prompts)
    try:
        with Progress("search", rounds_left(tasks, settings), "round") as progress:

            def on_round(task_id: str, round_number: int, added: list[Any]) -> None:
                progress.update(1)
                progress.set_details(problem=task_id, round=round_number)

            pools = search_many(engine, tasks, settings, config.sampling, config.prompts_dir or None, on_round)
    finally:
        engine.close()
    elapsed = time.perf_counter() - started
    rows = []
    finals = []
    for problem, task in zip(problems, tasks):
        result = write_result(task.directory, pools[task.id], settings, elapsed, engine_record(engine))
        final = final_proof(pools[task.id], settings)
        finals.append(FinalRecord(problem, final.proof, final.verifier_mean))
        rows.append({"id": task.id, "directory": str(task.directory), "best_id": result["best_id"],
                     "verifier_mean": final.verifier_mean, "self_score": final.self_score, "rounds": final.rounds,
                     "stopped": final.stopped, "pool_size": result["pool_size"], "full_passes": len(result["full_passes"]),
                     "completion_tokens": final.completion_tokens, "tokens_estimated": final.tokens_estimated})
    outputs = write_outputs(out / OUTPUTS_NAME, finals)
    summary = {"out": str(out), "problems": rows, "completion_tokens": sum(row["completion_tokens"] for row in rows),
               "tokens_estimated": any(row["tokens_estimated"] for row in rows), "deepseek_outputs": str(outputs),
               "elapsed_s": round(elapsed, 2), **engine_record(engine)}
    if args.json:
        sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    else:
        print_summary(summary)
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    for row in summary["problems"]:
        mean = "none" if row["verifier_mean"] is None else f"{row['verifier_mean']:g}"
        print(f"{row['id']}: mean verifier score {mean}  rounds {row['rounds']}  pool {row['pool_size']}  "
              f"stopped: {row['stopped']}  tokens {row['completion_tokens']}")
    estimated = " (some split from server totals)" if summary["tokens_estimated"] else ""
    print(f"\n{len(summary['problems'])} problems  tokens: {summary['completion_tokens']}{estimated}  time: "
          f"{summary['elapsed_s']} s  engine: {summary['engine']}  model: {summary['model']}\n"
          f"results: {Path(summary['out'])}/<id>/result.json, {summary['deepseek_outputs']}")
