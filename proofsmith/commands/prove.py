"""``proofsmith prove``: generate a proof and refine it until it grades itself 1."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from data.errors import InputError
from data.inputs import read_text
from engine.progress import Progress
from proofsmith.commands.common import config_from_args, engine_record, open_engine, print_dry_run
from proofsmith.commands.goal_check import checker_lines, checker_verdict, read_goal
from proofsmith.config import config_dict
from proofsmith.options import PROVE_FLAGS, SEARCH_FLAGS, SEARCH_MODE_PATHS
from proofsmith.run_files import JsonlRecorder, check_output_path
from proofsmith.workloads import refine_workload

if TYPE_CHECKING:
    from generator.refine import RefineResult, Round


def read_problem(args: argparse.Namespace) -> str:
    if args.problem and args.problem_file:
        raise InputError("give the problem as text or with --problem-file, not both")
    if args.problem_file:
        return read_text(args.problem_file, "problem")
    if args.problem is None or not args.problem.strip():
        raise InputError("no problem given: pass its text, or --problem-file FILE")
    return args.problem.strip()


def run(args: argparse.Namespace) -> int:
    if args.search:
        config = config_from_args(args, PROVE_FLAGS + SEARCH_FLAGS, SEARCH_MODE_PATHS)
    else:
        config = config_from_args(args, PROVE_FLAGS)
    if args.problems:
        if args.goal:
            raise InputError("--goal names the goal of one problem, not of a --problems file")
        if not args.search:
            raise InputError("--problems needs --search (sequential refinement proves one problem)")
        if args.problem or args.problem_file:
            raise InputError("give the problems with --problems or one problem as text/--problem-file, not both")
        from proofsmith.commands.search_many import read_problems, run_search_many

        problems = read_problems(args.problems, args.problems_format)  # bad rows fail here, before any model loads
        if args.dry_run:
            print_dry_run(config)
            return 0
        return run_search_many(args, config, problems)
    goal = read_goal(args.goal)
    if goal and args.search:
        raise InputError("--goal works with sequential prove, not with --search")
    if args.dry_run:
        print_dry_run(config)
        return 0
    problem = read_problem(args)
    if args.search:
        from proofsmith.commands.search import run_search

        return run_search(args, config, problem)
    if args.out:
        check_output_path(args.out)
    from generator.prompt import generation_messages
    from generator.refine import refine

    settings = config.prove
    started = time.perf_counter()
    first_prompt = generation_messages(problem, config.prompts_dir or None)
    engine = open_engine(config, refine_workload(settings, config.sampling.max_tokens), [first_prompt])
    recorder = JsonlRecorder(args.out) if args.out else None
    try:
        if recorder:
            recorder.write({"type": "config", "problem": problem, "config": config_dict(config), **engine_record(engine)})
        with Progress("prove", settings.max_rounds * settings.samples, "round") as progress:

            def on_round(round_: Round) -> None:
                progress.update(1)
                progress.set_details(score=round_.feedback_score)
                if recorder:
                    recorder.write({**round_.to_record(), **engine_record(engine)})

            result = refine(engine, problem, settings, config.sampling, config.prompts_dir or None, on_round)
        summary = summarize(result, settings.feedback, time.perf_counter() - started, engine_record(engine))
        if goal:
            summary["checker"] = checker_verdict(goal, summary["proof"] or "")
        if recorder:
            recorder.write({"type": "result", **summary})
            recorder.commit()
    finally:
        engine.close()
        if recorder:
            recorder.close()
    if args.json:
        sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    else:
        print_summary(summary)
    return 0


def summarize(result: RefineResult, feedback: str, elapsed_s: float, engine: dict[str, Any]) -> dict[str, Any]:
    """The final proof (``generator.final_proof``), with the feedback, the winning thread, time and engine."""
    return {**result.final_proof().to_dict(), "feedback": feedback, "thread": result.best.thread,
            "elapsed_s": round(elapsed_s, 2), **engine}


def print_summary(summary: dict[str, Any]) -> None:
    score = summary["self_score"]
    print("## Proof\n")
    print(summary["proof"] or "(the model produced no proof)")
    print(f"\n## Self evaluation (self-score: {'format failure' if score is None else f'{score:g}'})\n")
    print(summary["self_evaluation"] or "(no usable self-evaluation)")
    if summary["format_errors"]:
        print(f"\n(format problems: {'; '.join(summary['format_errors'])})")
    verifier = summary["verifier_mean"]
    verifier_part = f"  verifier mean: {verifier:g}" if verifier is not None else ""
    if "checker" in summary:
        print("\n" + "\n".join(checker_lines(summary["checker"], score, "self-evaluation")))
    print(
        f"\nrounds: {summary['rounds']} (stopped: {summary['stopped']}){verifier_part}"
        f"  engine: {summary['engine']}  model: {summary['model']}  time: {summary['elapsed_s']} s"
    )
