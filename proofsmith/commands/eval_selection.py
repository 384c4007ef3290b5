"""``proofsmith eval selection``: pick the better proof of each pair by mean verifier score; measure the picks.

Order of work, as in the other ``eval`` commands: resolve the config; check ``--out`` (a
directory holding records must have been made with the same settings); read and check
every pair (``data.pairwise``); on ``--dry-run`` write ``OUT/config.toml``, print it and
stop. Then open the engine (only when some pair is not yet scored), write the config, and
score the pending pairs in chunks (``eval.selection_run``), appending one flushed record per
pair to ``OUT/items.jsonl`` (a rerun skips the ids already there). Last,
``eval.selection`` turns every record of the selected pairs into ``metrics.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from engine.progress import Progress
from proofsmith.commands.common import engine_record, eval_config_from_args, eval_engine, previous_engine
from proofsmith.config import Config
from proofsmith.options import EVAL_SELECTION_FLAGS
from proofsmith.run_files import ITEMS_NAME, check_out_dir, write_dry_run
from proofsmith.workloads import selection_workload

SELECTION_IDENTITY = (
    "eval_selection.data", "eval_selection.columns", "eval_selection.samples", "engine.backend", "engine.model",
    "sampling.temperature", "sampling.top_p", "sampling.max_tokens", "sampling.seed", "prompts_dir",
)
"""Settings that shape the records: a run directory resumes only under the same values (max_items may change)."""
METRICS_NAME = "metrics.json"


def run_selection(args: argparse.Namespace) -> int:
    config = eval_config_from_args(args, EVAL_SELECTION_FLAGS, "eval_selection")
    settings = config.eval_selection
    out = Path(args.out)
    check_out_dir(out, config, SELECTION_IDENTITY)
    from data.pairwise import PairColumns, read_pairs
    from data.row_checks import renamed

    pairs = read_pairs(settings.data, renamed(PairColumns(), settings.columns))
    selected = pairs[: settings.max_items] if settings.max_items else pairs
    if args.dry_run:
        return write_dry_run(out, config)
    from data.jsonl import JsonlWriter, read_jsonl, resume_ids
    from eval.selection_run import score_pairs

    items_path = out / ITEMS_NAME
    done = resume_ids(items_path)
    pending = [(position, pair) for position, pair in enumerate(selected) if pair.id not in done]
    engine_info = previous_engine(out, config)
    if pending:
        chunk = settings.chunk_size
        workload = selection_workload(min(chunk, len(pending)), settings.samples, len(pending), config.sampling.max_tokens)
        with eval_engine(out, config, workload) as engine, \
                Progress("eval selection", len(selected), "pair", initial=len(selected) - len(pending)) as progress, \
                JsonlWriter(items_path) as writer:
            for start in range(0, len(pending), chunk):
                for record in score_pairs(engine, pending[start: start + chunk], settings.samples, config.sampling,
                                          config.prompts_dir or None):
                    writer.write(record)
                    progress.update(1)
        engine_info = engine_record(engine)
    wanted = {pair.id for pair in selected}
    records = [record for record in read_jsonl(items_path) if record["id"] in wanted]
    return report(args, out, config, records, len(pairs), len(pending), engine_info)


def report(args: argparse.Namespace, out: Path, config: Config, records: list[dict[str, Any]], read: int,
           scored_now: int, engine_info: dict[str, Any]) -> int:
    """metrics.json from every record of the selected pairs; the summary on stdout."""
    from eval.selection import selection_metrics

    settings = config.eval_selection
    document = {
        "settings": {"model": engine_info["model"], "engine": engine_info["engine"], "data_path": settings.data,
                     "n": settings.samples, "max_items": settings.max_items or None, "columns": settings.columns,
                     "temperature": config.sampling.temperature, "top_p": config.sampling.top_p,
                     "max_tokens": config.sampling.max_tokens, "seed": config.sampling.seed,
                     "prompts_dir": config.prompts_dir or None,
                     "pick_rule": "higher mean of parsed scores; no parsed score loses; equal means: tie, no pick"},
        **selection_metrics(records),
    }
    document["counts"].update({"data_items": read, "scored_now": scored_now})
    write_text_atomic(out / METRICS_NAME, json.dumps(document, indent=2) + "\n")
    counts = document["counts"]
    metrics = document["metrics"]
    summary = {"out": str(out), "pairs": counts["judged"], "n": settings.samples,
               **{name: entry["value"] for name, entry in metrics.items()},
               "interval": metrics["selection_accuracy"]["interval"],
               **{name: counts[name] for name in ("correct", "wrong", "tie", "no_pick", "prompt_too_long")},
               "engine": engine_info["engine"], "model": engine_info["model"]}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
        return 0
    accuracy, interval = summary["selection_accuracy"], summary["interval"]
    shown = "n/a" if accuracy is None else f"{accuracy:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
    print(f"{counts['judged']} pairs, n = {settings.samples} verifications per proof, by {engine_info['model']} "
          f"({engine_info['engine']}): selection accuracy {shown}; {counts['correct']} correct, {counts['wrong']} wrong, "
          f"{counts['tie']} ties, {counts['no_pick']} without a pick, {counts['prompt_too_long']} too long for the context")
    print(f"wrote {out / METRICS_NAME}")
    return 0
