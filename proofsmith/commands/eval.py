"""``proofsmith eval WHAT``: the verifier against human grades (here); the prover on a benchmark (``eval_prover``).

``eval verifier`` order of work, so that bad input fails before a model loads and leaves
nothing behind: resolve the config; check ``--out`` (a directory that already holds records
must have been made with the same settings); read and check every human grade; on
``--dry-run`` write ``OUT/config.toml``, print it and stop. Then open the engine (only when
some proof is not yet done), write the config, and run the ``label`` pipeline (n
verifications per proof, m meta-verifications per flagged analysis; ``m = 0`` skips them)
into ``OUT/items.jsonl``, one flushed record per proof, skipping ids already there. Last,
``eval.verifier_eval`` turns the records into ``metrics.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.errors import InputError
from engine.progress import Progress
from proofsmith.commands.common import engine_record, eval_config_from_args, eval_engine, previous_engine
from proofsmith.config import Config
from proofsmith.options import EVAL_VERIFIER_FLAGS
from proofsmith.run_files import ITEMS_NAME, check_out_dir, write_dry_run
from proofsmith.workloads import label_workload

VERIFIER_IDENTITY = (
    "eval_verifier.data", "eval_verifier.format", "eval_verifier.mapping", "eval_verifier.columns", "eval_verifier.samples",
    "eval_verifier.meta", "eval_verifier.confirm_rating", "eval_verifier.majority", "engine.backend", "engine.model",
    "sampling.temperature", "sampling.top_p", "sampling.max_tokens", "sampling.seed", "prompts_dir",
)
"""Settings that shape the records: a run directory resumes only under the same values (max_items may change)."""

if TYPE_CHECKING:
    from eval.human_grades import HumanGrade


def run(args: argparse.Namespace) -> int:
    if args.evaluation == "verifier":
        return run_verifier(args)
    if args.evaluation == "meta-verifier":
        from proofsmith.commands.eval_meta import run_meta_verifier

        return run_meta_verifier(args)
    if args.evaluation == "selection":
        from proofsmith.commands.eval_selection import run_selection

        return run_selection(args)
    if args.evaluation == "prover":
        from proofsmith.commands.eval_prover import run_prover

        return run_prover(args)
    raise InputError(f"unknown evaluation {args.evaluation!r}")  # argparse only lets known ones through


def run_verifier(args: argparse.Namespace) -> int:
    config = eval_config_from_args(args, EVAL_VERIFIER_FLAGS, "eval_verifier")
    settings = config.eval_verifier
    out = Path(args.out)
    check_out_dir(out, config, VERIFIER_IDENTITY)
    from eval.human_grades import read_human_grades

    from data.row_checks import renamed
    from data.verifier_rows import VerifierRowColumns

    grades = read_human_grades(settings.data, settings.format or None, settings.mapping,
                               renamed(VerifierRowColumns(), settings.columns))
    if not grades:
        raise InputError(f"no graded proofs in {args.data}")
    selected = grades[: settings.max_items] if settings.max_items else grades
    if args.dry_run:
        return write_dry_run(out, config)
    from data.jsonl import resume_ids
    from training.auto_labeling.pipeline import run_labeling
    from training.auto_labeling.config import LabelConfig

    items_path = out / ITEMS_NAME
    done = resume_ids(items_path)
    proofs = [grade.to_proof_item() for grade in selected]
    pending = [proof for proof in proofs if proof.id not in done]
    engine_info = previous_engine(out, config)
    if pending:
        label = LabelConfig(n=settings.samples, m=settings.meta, k=1, confirm_rating=settings.confirm_rating,
                            majority=settings.majority, chunk_size=settings.chunk_size)
        with eval_engine(out, config, label_workload(label, len(pending), config.sampling.max_tokens)) as engine, \
                Progress("eval verifier", len(proofs), "proof", initial=len(proofs) - len(pending)) as progress:
            run_labeling(engine, proofs, items_path, label, config.sampling, config.prompts_dir or None,
                         progress.update, done)
        engine_info = engine_record(engine)
    return report(args, out, config, selected, len(grades), len(pending), engine_info)


def report(args: argparse.Namespace, out: Path, config: Config, selected: list[HumanGrade], read: int,
           verified_now: int, engine_info: dict[str, Any]) -> int:
    """Metrics and report from every record of the selected proofs; the summary on stdout."""
    from eval.truth import truth_by_sample_count, truths_from
    from eval.verifier_eval import evaluate, grade_facts, headline, read_records, write_outputs

    settings = config.eval_verifier
    records = read_records(out / ITEMS_NAME, [grade.id for grade in selected])
    evaluation = evaluate(records, meta=settings.meta > 0, facts={grade.id: grade_facts(grade) for grade in selected})
    truths = truths_from({grade.id: grade.source_fields for grade in selected}, {grade.id: grade.human_score for grade in selected},
                         {grade.id: grade.proof for grade in selected})
    truth = truth_by_sample_count(records, truths) if truths else None
    detected = ", ".join(sorted({grade.source for grade in selected}))
    shown = {
        "model": engine_info["model"], "engine": engine_info["engine"], "data_path": settings.data,
        "grade_mapping": settings.mapping, "n": settings.samples, "meta_m": settings.meta,
        "format": settings.format or f"{detected} (detected)", "confirm_rating": settings.confirm_rating,
        "majority": settings.majority, "max_items": settings.max_items or None,
        "temperature": config.sampling.temperature, "top_p": config.sampling.top_p,
        "max_tokens": config.sampling.max_tokens, "seed": config.sampling.seed, "prompts_dir": config.prompts_dir or None,
    }
    counts = {"data_items": read, "selected": len(selected), "resumed": len(selected) - verified_now,
              "verified_now": verified_now}
    document = write_outputs(out, evaluation, shown, counts, truth)
    summary = {"out": str(out), **headline(document), "engine": engine_info["engine"], "model": engine_info["model"]}
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        print_summary(summary, out)
    return 0


def _shown(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _bracket(interval: Any) -> str:
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""


def print_summary(summary: dict[str, Any], out: Path) -> None:
    counts = summary["counts"]
    print(f"evaluated {counts['evaluated']} of {counts['selected']} proofs ({counts['data_items']} in the data; "
          f"{counts['resumed']} resumed, {counts['verified_now']} verified now, {counts['prompt_too_long']} too long "
          f"for the context)  engine: {summary['engine']}  model: {summary['model']}")
    if summary["n"] is None:
        print("no metrics: no proof could be evaluated")
    else:
        names = ("accuracy_majority", "cohen_kappa", "quadratic_kappa", "auroc", "format_failure_rate",
                 "all_pass_false_positive_rate")
        print(f"n = {summary['n']}: " + "  ".join(f"{name} {_shown(summary[name])}" for name in names))
        print("binary (correct = score 1): " + "  ".join(
            f"{name} {_shown(summary[key])}" for name, key in (
                ("one_sample", "binary_accuracy_one_sample"), (f"maj@{summary['n']}", "binary_accuracy_majority"),
                ("balanced", "binary_balanced_accuracy")))
              + f"  3-class balanced_accuracy {_shown(summary['balanced_accuracy'])}"
              + f"  tokens_per_judgement {_shown(summary['tokens_per_judgement'])}")
        print("0-7 points: " + "  ".join(f"{name} {_shown(summary['points_' + name])}"
                                         for name in ("four_class_accuracy", "nmae", "mae_points"))
              + (f"  ({summary['points_reason']})" if summary["points_reason"] else ""))
        reference = summary["reference_verifier"]
        if "reference" in reference:
            print(f"reference verifier ({reference['items']} proofs): " + "  ".join(
                f"{name} {_shown(reference['reference'][key])} (ours {_shown(reference['ours'][key])})" for name, key in (
                    ("accuracy", "accuracy_majority"), ("binary_accuracy", "binary_accuracy_majority"),
                    ("nmae", "points_nmae"))) + f"  |ours - reference| {_shown(reference['ours_vs_reference_mae'])}")
        filtered = summary.get("meta_filtered")
        if filtered:
            print("meta-filtered: " + "  ".join(f"{name} {_shown(filtered[name])}" for name in names)
                  + f"  ({filtered['removed_analyses']} analyses removed, {filtered['unjudged_analyses']} unjudged)")
    truth = summary.get("truth")
    if truth:
        names = ("accuracy", "balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate")
        print(f"against the checker's truth (n = {truth['n']}, {truth['flawed']} flawed, {truth['correct']} correct): "
              + "  ".join(f"{name} {_shown(truth[name])}{_bracket(truth['intervals'].get(name))}" for name in names))
        baseline = truth["majority_class"]
        if baseline:
            print(f"majority-class baseline (always {baseline['score']:g}): accuracy {_shown(baseline['accuracy'])}  "
                  f"balanced_accuracy {_shown(baseline['balanced_accuracy'])}  kappa {_shown(baseline['kappa'])}")
        guess = truth.get("random_step")
        if guess:
            print(f"random-step baseline (blames a uniformly drawn step): localisation {_shown(guess['localisation'])}  "
                  f"localised_by_any {_shown(guess['localised_by_any'])}")
    print(f"results: {out / 'metrics.json'}, {out / 'report.html'}, {out / ITEMS_NAME}")
