"""``proofsmith label``: auto-label proofs by scaled verification, resumably."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.readers import ColumnMap, parse_score_map, read_items
from engine.progress import Progress
from proofsmith.commands.common import config_from_args, open_engine, print_dry_run
from proofsmith.options import LABEL_FLAGS
from proofsmith.run_files import check_output_path
from proofsmith.workloads import label_workload


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args, LABEL_FLAGS)
    if args.dry_run:
        print_dry_run(config)
        return 0
    settings = config.label
    out = check_output_path(args.out)
    columns = ColumnMap(
        args.problem_column, args.proof_column, args.id_column, args.score_column, parse_score_map(args.score_map or "")
    )
    items, bad_rows = read_items(args.input, columns)
    if bad_rows and settings.on_bad_row == "fail":
        raise InputError(
            f"{len(bad_rows)} bad row(s) in {args.input}; first: {bad_rows[0]} (use --on-bad-row skip to label the rest)"
        )
    for bad in bad_rows:
        print(f"proofsmith: skipping {bad}", file=sys.stderr)
    if not items:
        raise InputError(f"no usable rows in {args.input}")
    from data.jsonl import resume_ids
    from training.auto_labeling.pipeline import run_labeling, summarize

    done = resume_ids(out)
    already = len(done & {item.id for item in items})
    engine = open_engine(config, label_workload(settings, len(items), config.sampling.max_tokens))
    try:
        with Progress("label", len(items), "proof", initial=already) as progress:
            run_labeling(engine, items, out, settings, config.sampling, config.prompts_dir or None, progress.update, done)
    finally:
        engine.close()
    summary = {**summarize(out), "bad_rows_skipped": len(bad_rows), "engine": engine.name, "model": engine.model}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print_summary(summary, out)
    return 0


def print_summary(summary: dict[str, Any], out: Path) -> None:
    labels = ", ".join(f"{name}: {count}" for name, count in summary["labels"].items())
    print(f"labeled {summary['records']} proofs into {out}  ({labels})")
    print(f"rules: {', '.join(f'{rule} {count}' for rule, count in summary['rules'].items())}")
    print(f"completion tokens: {summary['completion_tokens']}  engine: {summary['engine']}  model: {summary['model']}")
    agreement = summary.get("human_agreement")
    if agreement:
        def shown(name: str) -> str:
            return "n/a" if agreement[name] is None else f"{agreement[name]:.1%}"

        print(f"agreement with human scores: {shown('exact')} exact, over {agreement['labeled_with_human_score']} labeled proofs "
              f"with a human score (coverage {shown('coverage')}; labelled 1 and truly 1: {shown('precision_of_1')}; "
              f"below 1 but labelled 1: {shown('flawed_labelled_1')})")
    if summary["bad_rows_skipped"]:
        print(f"bad rows skipped: {summary['bad_rows_skipped']}")
