"""The ``proofsmith`` command. Parsing only: each command imports its heavy parts when it runs.

Known errors (``data.errors.ProofsmithError``) become one line on stderr and exit code 2;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from data.errors import ProofsmithError
from proofsmith import __version__
from proofsmith.offline import stay_offline
from proofsmith.options import (
    ENGINE_FLAGS,
    EVAL_META_VERIFIER_FLAGS,
    EVAL_PROVER_FLAGS,
    EVAL_SELECTION_FLAGS,
    EVAL_VERIFIER_FLAGS,
    LABEL_FLAGS,
    META_VERIFY_FLAGS,
    PROVE_FLAGS,
    SEARCH_FLAGS,
    TRAIN_FLAGS,
    VERIFY_FLAGS,
    CALIBRATE_FLAGS,
    WORLD_FLAGS,
    WORLD_MODEL_FLAGS,
    Flag,
    add_flags,
)
from training.config import TrainConfig
from training.world_model.config import WorldModelConfig


def add_run_options(parser: argparse.ArgumentParser, config_help: str, dry_run_help: str) -> None:
    """The options every command takes: config file, overrides, dry run, output and error modes."""
    parser.add_argument("--config", metavar="FILE", help=config_help)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override any config field (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help=dry_run_help)
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else there")
    parser.add_argument("--verbose", action="store_true", help="log progress of the libraries to stderr")
    parser.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors (implies --verbose)")


def _command_parser(subparsers: argparse._SubParsersAction, name: str, summary: str, flags: tuple[Flag, ...],
                    dry_run_help: str = "print the resolved config as TOML and stop") -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=summary, description=summary)
    add_run_options(parser, "TOML file with [engine], [sampling], [prove], [search], [verify], [meta_verify], [label], "
                    "[eval_verifier], [eval_selection], [eval_prover], [grader] tables", dry_run_help)
    add_flags(parser, flags, f"{name} settings")
    add_flags(parser, ENGINE_FLAGS, "engine and sampling")
    return parser


GOAL_HELP = ("a claim of the world's goal for this problem (repeatable), e.g. '(a + b)^2 = a^2 + 2ab + b^2': "
             "the world's checker then scores the proof beside the model")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="proofsmith",
        description="Self-verifiable math proofs: generate and self-refine, verify, meta-verify.",
    )
    parser.add_argument("--version", action="version", version=f"proofsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prove = _command_parser(subparsers, "prove", "generate a proof and refine it until its self-evaluation gives 1", PROVE_FLAGS)
    prove.add_argument("problem", nargs="?", help="the problem statement (or use --problem-file)")
    prove.add_argument("--problem-file", metavar="FILE", help="read the problem from FILE ('-' for stdin)")
    prove.add_argument("--out", metavar="RUN.jsonl|DIR", help="record every round as JSONL; with --search, the run directory (pool.jsonl, result.json; rerun to resume)")
    prove.add_argument("--search", action="store_true", help="high-compute pool search instead of sequential refinement (--verify-samples is then N)")
    prove.add_argument("--problems", metavar="FILE", help="with --search: search every problem of FILE together through one engine "
                       "(JSONL/CSV rows with problem and optional id, an IMO-ProofBench CSV, DeepSeekMath-V2 inputs JSON); "
                       "--out DIR then holds one folder per problem and deepseek_outputs.jsonl")
    prove.add_argument("--problems-format", metavar="NAME", default="", help="format of --problems: imo-proofbench, jsonl, csv, "
                       "deepseek-math-v2 (default: detected)")
    prove.add_argument("--goal", action="append", metavar="CLAIM", help=GOAL_HELP)
    add_flags(prove, SEARCH_FLAGS, "search settings (with --search)")

    verify = _command_parser(subparsers, "verify", "score a proof 0 / 0.5 / 1 with the verifier", VERIFY_FLAGS)
    verify.add_argument("--problem", required=True, metavar="FILE", help="file with the problem statement")
    verify.add_argument("--proof", required=True, metavar="FILE", help="file with the proof to score")
    verify.add_argument("--goal", action="append", metavar="CLAIM", help=GOAL_HELP)

    meta = _command_parser(subparsers, "meta-verify", "rate whether a verifier analysis is accurate", META_VERIFY_FLAGS)
    meta.add_argument("--problem", required=True, metavar="FILE", help="file with the problem statement")
    meta.add_argument("--proof", required=True, metavar="FILE", help="file with the proof that was analysed")
    meta.add_argument("--analysis", required=True, metavar="FILE", help="file with the verifier's analysis")

    label = _command_parser(subparsers, "label", "auto-label proofs 0 / 0.5 / 1 (or 'needs a human') by scaled verification", LABEL_FLAGS)
    label.add_argument("input", metavar="INPUT", help="proofs to label: .jsonl, .csv, .parquet or a datasets directory")
    label.add_argument("--out", required=True, metavar="LABELED.jsonl", help="one record per proof, appended as chunks finish; rerun to resume")
    label.add_argument("--problem-column", default="problem", metavar="NAME", help="input column with the problem (default: problem)")
    label.add_argument("--proof-column", default="proof", metavar="NAME", help="input column with the proof (default: proof)")
    label.add_argument("--id-column", default="id", metavar="NAME", help="input column with a row id (default: id; a content hash when absent)")
    label.add_argument("--score-column", default="score", metavar="NAME", help="input column with a human score in {0, 0.5, 1} (default: score; optional)")
    label.add_argument("--score-map", metavar="RAW=SCORE,...", help="map raw human grades to scores, e.g. 7=1,6=0.5,1=0,0=0 (IMO points)")
    evaluate = subparsers.add_parser(
        "eval", help="evaluate the verifier against human grades, the meta-verifier against rated critiques, the verifier "
                     "as a selector of proof pairs, or the prover",
        description="Evaluate against human grades: the verifier's agreement with graded proofs (verifier), the "
                    "meta-verifier's ratings of critiques against reference ratings (meta-verifier), the verifier picking "
                    "the better of two proofs (selection), or the prover on a benchmark, marked against reference "
                    "solutions (prover).",
    )
    evaluations = evaluate.add_subparsers(dest="evaluation", required=True, metavar="WHAT")
    verifier = _command_parser(evaluations, "verifier", "measure how well n verifier samples (optionally meta-filtered) "
                               "agree with human grades", EVAL_VERIFIER_FLAGS,
                               "check the settings, --out and the data, write OUT/config.toml, print it, and stop")
    verifier.add_argument("data", metavar="DATA", help="human-graded proofs (or verifier rows with a reference critique and "
                          "score): a .csv/.jsonl/.parquet file or a folder of them")
    verifier.add_argument("--out", required=True, metavar="DIR", help="run directory: config.toml, items.jsonl, metrics.json, "
                          "report.html; rerun to resume")
    meta = _command_parser(evaluations, "meta-verifier", "rate critiques m times each and measure the ratings against "
                           "reference ratings (does it catch invented defects?)", EVAL_META_VERIFIER_FLAGS,
                           "check the settings, --out and the data, write OUT/config.toml, print it, and stop")
    meta.add_argument("data", metavar="DATA", help="rated critiques: a .jsonl/.csv/.parquet file with problem, proof, "
                      "analysis and rating columns (the world's *_meta.jsonl)")
    meta.add_argument("--out", required=True, metavar="DIR", help="run directory: config.toml, items.jsonl, metrics.json; "
                      "rerun to resume")
    selection = _command_parser(evaluations, "selection", "verify both proofs of each pair n times and pick the higher "
                                "mean score; measure how often the pick is the right one", EVAL_SELECTION_FLAGS,
                                "check the settings, --out and the data, write OUT/config.toml, print it, and stop")
    selection.add_argument("data", metavar="DATA", help="proof pairs: a .jsonl/.csv/.parquet file with problem, proof_1, "
                           "proof_2 and correct_index (1 or 2) columns")
    selection.add_argument("--out", required=True, metavar="DIR", help="run directory: config.toml, items.jsonl, "
                           "metrics.json; rerun to resume")
    prover = _command_parser(evaluations, "prover", "prove benchmark problems (refine or search), mark each proof 0/1/6/7 "
                             "against the reference solution and guidelines, check short answers with sympy",
                             EVAL_PROVER_FLAGS, "check the settings, --out and the data, write OUT/config.toml, print it, and stop")
    prover.add_argument("data", metavar="DATA", help="benchmark problems: an IMO-ProofBench CSV or a JSONL file")
    prover.add_argument("--out", required=True, metavar="DIR", help="run directory: config.toml, items.jsonl, metrics.json, "
                        "report.html (search pools under search/); rerun to resume")
    add_flags(prover, PROVE_FLAGS, "refinement settings (--mode refine)")
    add_flags(prover, SEARCH_FLAGS, "search settings (--mode search; --verify-samples is then N)")
    world = subparsers.add_parser(
        "world", help="write the ground-truth world: generated problems, correct and flawed proofs, the checker's truth",
        description="Write problems whose truth sympy decides, with correct proofs and proofs flawed in named ways, in a "
                    "training split and two test splits (held-out templates and coefficients; held-out families). Every "
                    "proof's score (0 / 0.5 / 1) and first bad step are decided by the checker from its text.",
    )
    world.add_argument("--out", metavar="DIR", help="directory for train/test_in/test_out(.jsonl, _meta.jsonl), "
                       "config.toml and summary.json (files replaced atomically); required unless a WHAT is given")
    add_run_options(world, "TOML file with a [world] table", "print the resolved config as TOML and stop")
    add_flags(world, WORLD_FLAGS, "world settings")
    world_actions = world.add_subparsers(dest="world_action", required=False, metavar="WHAT")
    world_model = world_actions.add_parser(
        "model", help="train the world model: a small Llama decoder from scratch, with a BPE trained on world text",
        description="Draw a fresh training world, teach a small decoder (transformers' Llama architecture, a byte-level "
                    "BPE trained on the world's text) the three roles' prompts and answers, and save an ordinary "
                    "checkpoint in OUT/final that every engine and command loads with --model (prompts: OUT/final/prompts). "
                    "Rerun to resume.",
    )
    add_run_options(world_model, "TOML file with [world], [examples], [tokenizer], [architecture], [training] tables "
                    "(configs/world_model.toml)", "write the resolved config to the run directory, print it, and stop")
    add_flags(world_model, WORLD_MODEL_FLAGS, "world model settings", root=WorldModelConfig)
    calibrate = _command_parser(world_actions, "calibrate", "measure a model on a world directory against the checker: "
                                "the generator's pass@1 and pass@k and the verifier's recall per true score and "
                                "localisation, per family and level", CALIBRATE_FLAGS,
                                "check the settings, --out and the data, write OUT/config.toml, print it, and stop")
    calibrate.add_argument("data", metavar="DATA", help="a world directory (proofsmith world --out DIR, or a world model's "
                           "RUN/world) with SPLIT_problems.jsonl and SPLIT.jsonl")
    calibrate.add_argument("--out", required=True, metavar="DIR", help="run directory: config.toml, generations.jsonl, "
                           "verifications.jsonl, calibration.json/.md/.png; rerun to resume")
    train = subparsers.add_parser(
        "train", help="GRPO training of a role on TRL, or the SFT cold start",
        description="Train the verifier, meta-verifier or generator with GRPO (TRL), run the supervised cold start (sft), "
                    "or the whole iteration schedule (loop).",
    )
    train.add_argument("role", choices=("verifier", "meta-verifier", "generator", "sft", "loop"),
                       help="what to train; loop runs the whole iteration schedule")
    add_run_options(train, "TOML training config (see configs/*_cpu.toml, *_gpu.toml)",
                    "write the resolved config to the run directory, print it, and stop")
    add_flags(train, TRAIN_FLAGS, "training settings", root=TrainConfig)
    return parser


def _world_handler(args: argparse.Namespace) -> int:
    """``world`` writes the splits; ``world model`` trains the world model; ``world calibrate`` measures a model."""
    if args.world_action == "model":
        from proofsmith.commands import world_model

        return world_model.run(args)
    if args.world_action == "calibrate":
        from proofsmith.commands import world_calibrate

        return world_calibrate.run(args)
    from proofsmith.commands import world as world_command

    return world_command.run(args)


def _handler(command: str) -> Callable[[argparse.Namespace], int]:
    if command == "prove":
        from proofsmith.commands import prove

        return prove.run
    if command == "train":
        from proofsmith.commands import train

        return train.run
    if command == "eval":
        from proofsmith.commands import eval as eval_command

        return eval_command.run
    if command == "label":
        from proofsmith.commands import label

        return label.run
    if command == "world":
        return _world_handler
    if command == "verify":
        from proofsmith.commands import verify

        return verify.run
    from proofsmith.commands import meta_verify

    return meta_verify.run


def main(argv: Sequence[str] | None = None) -> int:
    stay_offline()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "world" and args.world_action is None and not args.out:
        parser.error("proofsmith world: --out is required (or name a WHAT: model, calibrate)")
    from engine import progress
    from proofsmith.commands.common import quiet_libraries

    quiet_libraries(args.verbose or args.debug)
    progress.enable()
    try:
        return _handler(args.command)(args)
    except ProofsmithError as error:
        progress.close_all()
        if args.debug:
            raise
        print(f"proofsmith: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        progress.close_all()
        print("proofsmith: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the one place unexpected errors are translated
        progress.close_all()
        if args.debug:
            raise
        print(f"proofsmith: internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback)", file=sys.stderr)
        return 1
