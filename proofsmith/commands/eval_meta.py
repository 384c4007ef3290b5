"""``proofsmith eval meta-verifier``: rate critiques m times each and measure the ratings against reference ratings.

Order of work, as in ``eval verifier``: resolve the config; check ``--out`` (a directory
holding records must have been made with the same settings); read and check every rated
critique (the meta-verifier training rows' reader and columns: problem, proof, analysis,
rating, optional id); on ``--dry-run`` write ``OUT/config.toml``, print it and stop. Then
open the engine (only when some critique is not yet rated), write the config, and rate the
pending critiques in chunks, appending one flushed record per critique to
``OUT/items.jsonl`` (a rerun skips the ids already there). Each critique's requests are
seeded by its position in the data, so a resumed run samples what an unbroken one would.
A critique whose prompt does not fit the model is recorded with ``error``. Last,
``eval.meta_eval`` turns every record into ``metrics.json`` and the summary; when the data says
each critique's ``critique_kind`` (the world's ``SPLIT_meta.jsonl``), ``eval.meta_by_defect`` adds
whether the ratings split true from invented critiques at the same boxed score (the check that
``rewards.meta_check`` reads before R_meta may reward a verifier).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from engine.progress import Progress
from proofsmith.commands.common import engine_record, eval_config_from_args, eval_engine, previous_engine
from proofsmith.config import Config
from proofsmith.options import EVAL_META_VERIFIER_FLAGS
from proofsmith.run_files import ITEMS_NAME, check_out_dir, write_dry_run
from proofsmith.workloads import verify_workload

META_IDENTITY = (
    "eval_meta_verifier.data", "eval_meta_verifier.samples", "engine.backend", "engine.model", "sampling.temperature",
    "sampling.top_p", "sampling.max_tokens", "sampling.seed", "prompts_dir",
)
"""Settings that shape the records: a run directory resumes only under the same values (max_items may change)."""
METRICS_NAME = "metrics.json"


def run_meta_verifier(args: argparse.Namespace) -> int:
    config = eval_config_from_args(args, EVAL_META_VERIFIER_FLAGS, "eval_meta_verifier")
    settings = config.eval_meta_verifier
    out = Path(args.out)
    check_out_dir(out, config, META_IDENTITY)
    from training.config import DataSettings
    from training.role_data.rows import read_rows

    rows = read_rows(DataSettings(path=settings.data, max_proof_chars=0), "meta-verifier")
    selected = rows[: settings.max_items] if settings.max_items else rows
    if args.dry_run:
        return write_dry_run(out, config)
    from data.jsonl import JsonlWriter, read_jsonl, resume_ids

    items_path = out / ITEMS_NAME
    done = resume_ids(items_path)
    pending = [(position, row) for position, row in enumerate(selected) if row.id not in done]
    engine_info = previous_engine(out, config)
    if pending:
        samples = settings.samples
        with eval_engine(out, config, verify_workload(settings.chunk_size * samples, config.sampling.max_tokens)) as engine, \
                Progress("eval meta-verifier", len(selected), "critique", initial=len(selected) - len(pending)) as progress, \
                JsonlWriter(items_path) as writer:
            for start in range(0, len(pending), settings.chunk_size):
                for record in rate_chunk(engine, pending[start: start + settings.chunk_size], config):
                    writer.write(record)
                    progress.update(1)
        engine_info = engine_record(engine)
    wanted = {row.id for row in selected}
    records = [record for record in read_jsonl(items_path) if record["id"] in wanted]
    records = with_critique_kinds(records, selected, settings.data)
    return report(args, out, config, records, len(rows), len(pending), engine_info)


def rate_chunk(engine: Any, chunk: list[tuple[int, Any]], config: Config) -> list[dict[str, Any]]:
    """One engine call for the chunk's critiques (``samples`` ratings each); a record per critique."""
    from engine.fitting import generate_fitting
    from engine.sampling import make_requests
    from meta_verifier.meta_verify import META_FORMAT, MetaItem, meta_verification_messages
    from verifier.verification import verification_from

    prompts_dir = config.prompts_dir or None
    requests = [make_requests([meta_verification_messages(MetaItem(row.problem, row.proof, row.analysis), prompts_dir)],
                              config.sampling, n=config.eval_meta_verifier.samples,
                              seed_offset=position * config.eval_meta_verifier.samples)[0]
                for position, row in chunk]
    answers, refused = generate_fitting(engine, requests)
    records = []
    for slot, ((_, row), answer) in enumerate(zip(chunk, answers)):
        if answer is None:
            records.append({"id": row.id, "reference": row.rating, "error": refused[slot]})
            continue
        rating = verification_from(answer, META_FORMAT, (row.proof, row.analysis))
        records.append({"id": row.id, "reference": row.rating, "ratings": [a.score for a in rating.analyses],
                        "samples": [a.to_dict() for a in rating.analyses], "prompt_tokens": rating.prompt_tokens,
                        "completion_tokens": rating.completion_tokens})
    return records


def with_critique_kinds(records: list[dict[str, Any]], rows: list[Any], data: str) -> list[dict[str, Any]]:
    """Records with the critique's ``critique_kind`` and the score its analysis boxed, where the data says the kind
    (computed here, not stored: records written before this existed gain them too)."""
    from training.config import DataSettings
    from training.role_data.rows import rows_of
    from verifier.parse import parse_verdict

    kinds = {str(raw["id"]): raw["critique_kind"] for _, raw, _ in rows_of(DataSettings(path=data))
             if raw and raw.get("id") is not None and raw.get("critique_kind")}
    if not kinds:
        return records
    boxed = {row.id: parse_verdict(row.analysis).score for row in rows if row.id in kinds}
    return [{**record, "critique_kind": kinds[record["id"]], "boxed": boxed[record["id"]]} if record["id"] in kinds
            else record for record in records]


def report(args: argparse.Namespace, out: Path, config: Config, records: list[dict[str, Any]], read: int,
           rated_now: int, engine_info: dict[str, Any]) -> int:
    """metrics.json from every record of the selected critiques; the summary on stdout."""
    from eval.meta_by_defect import defect_split, describe, rating_by_critique
    from eval.meta_eval import meta_metrics

    if not records:
        raise InputError(f"no rated critiques in {out / ITEMS_NAME}")
    settings = config.eval_meta_verifier
    document = {
        "settings": {"model": engine_info["model"], "engine": engine_info["engine"], "data_path": settings.data,
                     "m": settings.samples, "max_items": settings.max_items or None,
                     "temperature": config.sampling.temperature, "top_p": config.sampling.top_p,
                     "max_tokens": config.sampling.max_tokens, "seed": config.sampling.seed,
                     "prompts_dir": config.prompts_dir or None},
        **meta_metrics(records),
    }
    split = defect_split(records)
    if split is not None:
        document.update(rating_by_critique=rating_by_critique(records), defect_split=split)
    document["counts"].update({"data_items": read, "rated_now": rated_now})
    write_text_atomic(out / METRICS_NAME, json.dumps(document, indent=2) + "\n")
    metrics = {name: entry["value"] for name, entry in document["metrics"].items()}
    summary = {"out": str(out), "critiques": document["counts"]["judged"], **metrics,
               "engine": engine_info["engine"], "model": engine_info["model"]}
    if split is not None:
        summary["rates_by_defect"] = split["rates_by_defect"]
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
        return 0
    shown = ", ".join(f"{name.replace('_', ' ')} {value:.3f}" if value is not None else f"{name.replace('_', ' ')} n/a"
                      for name, value in metrics.items())
    print(f"{summary['critiques']} critiques rated by {engine_info['model']} ({engine_info['engine']}): {shown}")
    if split is not None:
        print(f"by defect: {describe(split)}")
    print(f"wrote {out / METRICS_NAME}")
    return 0
