"""``proofsmith eval prover``: prove each benchmark problem, mark it 0/1/6/7, check short answers.

Order of work, as in ``eval verifier``: resolve the config; check ``--out`` (records there
must come from the same settings); read and check every problem; ``--dry-run`` writes
``OUT/config.toml``, prints it and stops. Then, only if some problem is not yet done, open
the prover engine and the grader engine (the same one when ``[grader]`` names no other
model, backend or server), and for each pending problem prove, mark and check it, and
append its record to ``OUT/items.jsonl`` (one flushed line per problem: a killed run
loses at most the problem in progress; a search keeps its pool in ``OUT/search/ID``).
Last, ``metrics.json`` and ``report.html`` from every record of the selected problems.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from engine.base import Engine
from engine.config import EngineConfig, SamplingConfig
from engine.progress import Progress
from proofsmith.commands.common import engine_record, open_engine, with_model_prompts
from proofsmith.config import Config, resolve_config, to_toml
from proofsmith.options import (
    ENGINE_FLAGS, EVAL_PROVER_FLAGS, PROVE_FLAGS, SEARCH_FLAGS, SEARCH_MODE_PATHS, Flag, overrides_from,
)
from proofsmith.run_files import CONFIG_NAME, ITEMS_NAME, check_out_dir, safe_name, write_dry_run
from proofsmith.workloads import grader_workload, refine_workload, search_workload
from verifier.templates import check_prompts_dir

PROVER_IDENTITY = (
    "eval_prover.data", "eval_prover.format", "eval_prover.mode", "prove.max_rounds", "prove.samples", "prove.feedback",
    "prove.verify_samples", "prove.max_evaluations", "search.pool", "search.verify_samples", "search.top_k",
    "search.analyses_per_prompt", "search.analysis_order", "search.samples_per_pair", "search.rounds",
    "search.stop_at_full_pass", "engine.backend", "engine.model", "sampling.temperature", "sampling.top_p",
    "sampling.max_tokens", "sampling.seed", "grader.backend", "grader.model", "grader.samples", "grader.temperature",
    "grader.max_tokens", "prompts_dir",
)
"""Settings that shape the records: a run directory resumes only under the same values (select and max_items may change)."""


def resolve_prover_config(args: argparse.Namespace) -> Config:
    flags: tuple[Flag, ...] = ENGINE_FLAGS + EVAL_PROVER_FLAGS + PROVE_FLAGS + SEARCH_FLAGS

    def resolved(renamed: dict[str, str] | None) -> Config:
        overrides = overrides_from(args, flags, renamed)
        overrides.setdefault("eval_prover", {})["data"] = str(Path(args.data).absolute())
        return with_model_prompts(resolve_config(args.config, overrides, args.set))

    config = resolved(None)
    check_prompts_dir(config.prompts_dir)
    # As in `prove --search`, whether the mode came from --mode, the TOML or --set.
    return resolved(SEARCH_MODE_PATHS) if config.eval_prover.mode == "search" else config


def grader_engine_config(config: Config) -> EngineConfig | None:
    """The grader's engine settings; None when the grader is the prover's own engine."""
    grader = config.grader
    if not (grader.backend or grader.model or grader.base_urls):
        return None
    resolved = replace(
        config.engine, backend=grader.backend or config.engine.backend, model=grader.model or config.engine.model,
        base_urls=list(grader.base_urls or config.engine.base_urls), api_key_env=grader.api_key_env or config.engine.api_key_env,
    )
    return None if resolved == config.engine else resolved


def grader_sampling(config: Config) -> SamplingConfig:
    grader = config.grader
    return SamplingConfig(temperature=grader.temperature, top_p=config.sampling.top_p if grader.temperature else 1.0,
                          max_tokens=grader.max_tokens, seed=config.sampling.seed)


def run_prover(args: argparse.Namespace) -> int:
    config = resolve_prover_config(args)
    settings = config.eval_prover
    out = Path(args.out)
    check_out_dir(out, config, PROVER_IDENTITY)
    from eval.benchmark_problems import read_benchmark_problems, select_problems

    problems = read_benchmark_problems(settings.data, settings.format)
    chosen = select_problems(problems, settings.select)
    if not chosen:
        which = f" whose id starts with {', '.join(settings.select)}" if settings.select else ""
        raise InputError(f"no problems{which} in {args.data}")
    selected = chosen[: settings.max_items] if settings.max_items else chosen
    if args.dry_run:
        return write_dry_run(out, config)
    from data.jsonl import resume_ids

    done = resume_ids(out / ITEMS_NAME)
    pending = [problem for problem in selected if problem.id not in done]
    engines: dict[str, Any] = {}
    if pending:
        engines = evaluate_pending(config, out, pending, len(selected))
    return report(args, out, config, selected, len(problems), len(pending), engines)


def evaluate_pending(config: Config, out: Path, pending: list[Any], total: int) -> dict[str, Any]:
    """Prove, mark and check every pending problem, one flushed record each; the engines used."""
    from data.jsonl import JsonlWriter
    from eval.prover_eval import evaluate_problem, prove_problem

    settings = config.eval_prover
    workload = (search_workload(config.search, config.sampling.max_tokens, len(pending)) if settings.mode == "search"
                else refine_workload(config.prove, config.sampling.max_tokens, len(pending)))
    # Not common.eval_engine: the run directory waits for both engines (a bad grader writes nothing either).
    prover = open_engine(config, workload)  # a bad model fails here, before anything is written
    grader: Engine = prover
    try:
        grader_config = grader_engine_config(config)
        if grader_config is not None:
            grader = open_engine(replace(config, engine=grader_config),
                                 grader_workload(config.grader, len(pending)))
        out.mkdir(exist_ok=True)
        write_text_atomic(out / CONFIG_NAME, to_toml(config))
        prompts_dir = config.prompts_dir or None
        searched = search_pending(prover, config, out, pending) if settings.mode == "search" else {}
        with JsonlWriter(out / ITEMS_NAME) as items, \
                Progress("eval prover", total, "problem", initial=total - len(pending)) as progress:
            for problem in pending:
                proved = searched.get(problem.id) or prove_problem(
                    prover, problem, settings.mode, config.prove, config.search, config.sampling,
                    out / "search" / safe_name(problem.id), prompts_dir)
                record = evaluate_problem(problem, proved, grader, config.grader.samples, grader_sampling(config),
                                          prompts_dir, settings.answer_time_limit)
                items.write({**record, "prover": engine_record(prover), "grader": engine_record(grader)})
                progress.update(1)
                progress.set_details(points=record["points"])
    finally:
        if grader is not prover:
            grader.close()
        prover.close()
    return {"prover": engine_record(prover), "grader": engine_record(grader)}


def search_pending(prover: Engine, config: Config, out: Path, pending: list[Any]) -> dict[str, dict[str, Any]]:
    """Search every pending problem together (one engine session; pools in ``OUT/search/ID``), before any is graded."""
    from eval.prover_eval import prove_problems_by_search
    from generator.search_many import SearchTask, rounds_left

    directories = [out / "search" / safe_name(problem.id) for problem in pending]
    tasks = [SearchTask(problem.id, problem.problem, directory) for problem, directory in zip(pending, directories)]
    with Progress("search", rounds_left(tasks, config.search), "round") as progress:

        def on_round(task_id: str, round_number: int, added: list[Any]) -> None:
            progress.update(1)
            progress.set_details(problem=task_id, round=round_number)

        proved = prove_problems_by_search(prover, pending, config.search, config.sampling, directories,
                                          config.prompts_dir or None, on_round)
    return {problem.id: record for problem, record in zip(pending, proved)}


def previous_engines(records: list[dict[str, Any]], config: Config) -> dict[str, Any]:
    """The engines named in the records, when this rerun opened none."""
    if records and "prover" in records[-1]:
        return {"prover": records[-1]["prover"], "grader": records[-1]["grader"]}
    shown = {"engine": config.engine.backend, "model": config.engine.model}
    return {"prover": shown, "grader": shown}


def report(args: argparse.Namespace, out: Path, config: Config, selected: list[Any], read: int, proved_now: int,
           engines: dict[str, Any]) -> int:
    from eval.prover_eval import write_outputs
    from eval.verifier_eval import read_records

    settings = config.eval_prover
    records = read_records(out / ITEMS_NAME, [problem.id for problem in selected])
    engines = engines or previous_engines(records, config)
    mode_settings = config.search if settings.mode == "search" else config.prove
    shown = {
        "data_path": settings.data, "select": ", ".join(settings.select) or None, "mode": settings.mode,
        "prover_model": engines["prover"]["model"], "prover_engine": engines["prover"]["engine"],
        "grader_model": engines["grader"]["model"], "grader_engine": engines["grader"]["engine"],
        "grader_samples": config.grader.samples, "grader_temperature": config.grader.temperature,
        "grader_max_tokens": config.grader.max_tokens, **{f"{settings.mode}_{key}": value for key, value in vars(mode_settings).items()},
        "temperature": config.sampling.temperature, "top_p": config.sampling.top_p, "max_tokens": config.sampling.max_tokens,
        "seed": config.sampling.seed, "prompts_dir": config.prompts_dir or None,
    }
    counts = {"data_problems": read, "selected": len(selected), "evaluated": len(records),
              "resumed": len(selected) - proved_now, "proved_now": proved_now}
    document = write_outputs(out, records, shown, counts)
    write_deepseek_outputs(out, selected, records)
    total = document["total"][0] if document["total"] else {}
    summary = {"out": str(out), "counts": counts, "total": total, "by_level": document["by_level"],
               "by_category": document["by_category"], **{f"{role}_{key}": value for role in ("prover", "grader")
                                                           for key, value in engines[role].items()}}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print_summary(summary, out)
    return 0


def write_deepseek_outputs(out: Path, selected: list[Any], records: list[dict[str, Any]]) -> None:
    """``OUT/deepseek_outputs.jsonl``: one release-shaped line per evaluated problem, in the data's order."""
    from eval.deepseek_outputs import OUTPUTS_NAME, FinalRecord, write_outputs as write_release_shape

    by_id = {record["id"]: record for record in records}
    write_release_shape(out / OUTPUTS_NAME, [
        FinalRecord(problem, by_id[problem.id]["proof"], by_id[problem.id]["verifier_mean"], by_id[problem.id]["points"])
        for problem in selected if problem.id in by_id
    ])


def print_summary(summary: dict[str, Any], out: Path) -> None:
    counts, total = summary["counts"], summary["total"]
    print(f"evaluated {counts['evaluated']} of {counts['selected']} problems ({counts['data_problems']} in the data; "
          f"{counts['resumed']} resumed, {counts['proved_now']} proved now)  prover: {summary['prover_model']} "
          f"({summary['prover_engine']})  grader: {summary['grader_model']} ({summary['grader_engine']})")
    if total:
        percent = "n/a" if total["percent"] is None else f"{total['percent']:.1f} %"
        print(f"score: {total['points']} / {total['max_points']} points ({percent}) over {total['graded']} graded "
              f"problems; {total['ungraded']} ungraded, {total['full_marks']} full marks; short answers "
              f"{total['answer_correct']} / {total['answer_checked']} right; {total['disagreements']} disagreements")
        if "truth_checked" in total:
            print(f"against the checker's truth: {total['true_pass']} / {total['truth_checked']} proofs true "
                  f"(true pass rate {total['true_pass_rate']:.3f}, mean true score {total['true_mean_score']:.3f}; "
                  f"{total['unreadable']} with no readable step)")
            if "true_pass_rate_by_round" in total:
                print("true pass rate had each run stopped after r rounds: "
                      + ", ".join(f"r={rounds} {rate:.3f}" for rounds, rate in total["true_pass_rate_by_round"].items()))
            if "true_pool_pass_rate" in total:
                print(f"the same pools without the verifier's pick: a random pool proof is true at rate "
                      f"{total['true_pool_pass_rate']:.3f}; {total['true_pool_any_pass']:.3f} of the problems have a true "
                      f"proof in the pool ({total['pool_proofs']} proofs in {total['pool_problems']} pools)")
        for name in ("by_level", "by_category"):
            parts = [f"{row[next(iter(row))]} {'n/a' if row['percent'] is None else format(row['percent'], '.1f')} %"
                     for row in summary[name]]
            print(f"{name.replace('_', ' ')}: " + ", ".join(parts))
    print(f"results: {out / 'metrics.json'}, {out / 'report.html'}, {out / ITEMS_NAME}")
