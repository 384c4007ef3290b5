"""Teach the verifier the generator's own mistakes: does its score then rank the generator's proofs by truth?

The bundled world model, as verifier, cannot tell its own generator's passing proofs from its failing
ones (``world_reward_signal.py``: within-problem ranking 0.50, a coin), though it tells the world's
hand-made flawed proofs from correct ones above chance: it was taught on injected defects, and the
generator's errors are other ones (a wrong factorisation written as confidently as a right one). So
generator GRPO with it as reward learns nothing true (``world_generator_arms.py``). The paper trains its
verifier on the generator's proofs; here the checker grades them:

1. sample: the start writes 8 proofs of ``--per-group`` training problems per (family, level) group
   (``world calibrate --split train --role generator``), each judged by the checker;
2. rows: each of those proofs with the world's worked analysis of it (``worked_analysis``: the
   checker's first bad step, its sides expanded; the score the checker gives), plus as many of the
   world's own verifier rows (hand-made defects, the control arm's rows of ``world_verdict_reads_work.py``),
   so the old skill is kept;
3. fine-tune the start on them (``train sft``, verifier answers only; the recipe of the control arm,
   ``runs/world-verdict-share0``, which saw the world's rows alone);
4. measure the reward signal (``world_reward_signal.py``) of the start, the control and this model
   on held-out proofs: the start's 8 proofs of every test_in problem (``world_generator_arms.py``'s
   ``runs/world-generator/start-generator``), problems with a passing and a failing proof.

Every step resumes. Adds entries to ``OUT/world_reward_signal.json``. ``--start`` runs the same recipe from
another world model (a continued one, ``world_model_continued.py``), its held-out proofs given by
``--held-out`` (its ``calibration-generator``); its control is trained beside ``--run``:

    python benchmarks/world_verifier_own_proofs.py --out benchmarks/results
    python benchmarks/world_verifier_own_proofs.py --out benchmarks/results --start runs/world-lm-continued-3/final \
        --held-out runs/world-lm-continued-3/calibration-generator --run runs/world-lm-continued-3-own-proofs
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl, write_jsonl  # noqa: E402
from world_reward_signal import measure, record  # noqa: E402
from world_runs import START_MODEL, WORLD, calibrate, proofsmith  # noqa: E402
from world_verdict_reads_work import SFT, write_rows  # noqa: E402

RUN = Path("runs/world-verifier-own-proofs")
CONTROL = Path("runs/world-verdict-share0")
"""Fine-tuned the same way on the world's verifier rows alone (world_verdict_reads_work.py, share 0)."""
HELD_OUT = Path("runs/world-generator/start-generator")
"""The start's 8 proofs of every test_in problem (world_generator_arms.py)."""
SAMPLE = ("--split", "train", "--role", "generator", "--engine", "vllm", "--samples", "8", "--temperature", "1",
          "--max-tokens", "640", "--seed", "1", "--set", "engine.max_model_len=1024", "--set", "calibrate.chunk_size=256")


def own_rows(generations: Path) -> list[dict[str, Any]]:
    """One verifier row per parsed proof of ``generations``: the checker's score and the world's worked analysis."""
    from data.world.checker import check, parse_goal
    from data.world.problems import Problem
    from data.world.proofs import WorldProof
    from training.role_data.world_critiques import worked_analysis

    statements = {row["id"]: row for row in read_jsonl(WORLD / "train_problems.jsonl")}
    rows = []
    for record_ in read_jsonl(generations / "generations.jsonl"):
        source = statements[record_["id"]]
        problem = Problem(record_["id"], record_["family"], record_["template"], source["problem"],
                          parse_goal(tuple(source["goal"])), record_["level"])
        for index, (text, parsed) in enumerate(zip(record_["proofs"], record_["formats_ok"])):
            if not parsed or not text.strip():
                continue
            verdict = check(problem.goal, text)
            proof = WorldProof(f"{record_['id']}/{index}", problem, text, verdict.score, verdict.first_bad_step, None, None)
            rows.append({"id": proof.id, "problem": problem.statement, "proof": text, "score": verdict.score,
                         "critique": worked_analysis(proof)})
    return rows


def world_rows() -> Path:
    """The world's verifier rows of the control arm (two worked analyses a training problem), written once."""
    path = CONTROL / "rows.jsonl"
    if not path.with_suffix(".json").exists():
        write_rows(path, 0.0, 2, 0)
    return path


def fine_tune(start: str, run: Path, rows: Path, steps: int) -> tuple[str, ...]:
    """``train sft`` of ``start`` on ``rows`` (verifier answers; world_verdict_reads_work.py's recipe), unless done."""
    command = ("train", "sft", "--model", start, "--data", str(rows), "--run-dir", str(run),
               "--set", f"sft.max_steps={steps}", "--set", "sft.batch_size=16", "--set", "sft.learning_rate=3e-4", *SFT)
    if not (run / "COMPLETE").exists():
        proofsmith(*command)
    return command


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--per-group", type=int, default=40, help="training problems sampled per (family, level) group")
    parser.add_argument("--steps", type=int, default=300, help="SFT steps (the control arm's)")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 0.0])
    parser.add_argument("--start", default=START_MODEL, help="the world model that writes the proofs and is fine-tuned")
    parser.add_argument("--held-out", default=str(HELD_OUT),
                        help="a `world calibrate --split test_in --role generator` folder of the start's proofs")
    parser.add_argument("--run", default=str(RUN), help="the fine-tune's run directory (its proofs and rows inside)")
    args = parser.parse_args()
    start, run, held_out = args.start, Path(args.run), Path(args.held_out)
    bundled = start == START_MODEL
    control = CONTROL if bundled else run.with_name(run.name + "-control")
    label = "start" if bundled else Path(start).parent.name
    if not (held_out / "generations.jsonl").exists():
        raise SystemExit(f"needs {held_out}: python benchmarks/world_generator_arms.py (or world_model_continued.py)")
    run.mkdir(parents=True, exist_ok=True)
    CONTROL.mkdir(parents=True, exist_ok=True)
    samples = run / "train-generations"
    calibrate(start, samples, *SAMPLE, "--max-problems-per-group", str(args.per_group))
    rows_path = run / "rows.jsonl"
    if not rows_path.with_suffix(".json").exists():  # the summary is written last
        own = own_rows(samples)
        world = read_jsonl(world_rows())
        random.Random("own-proofs/world-rows").shuffle(world)
        rows = own + world[: len(own)]
        random.Random("own-proofs/order").shuffle(rows)
        write_jsonl(rows_path, rows)
        summary = {"own proofs": len(own), "own proofs by score": {str(score): sum(row["score"] == score for row in own)
                                                                    for score in (0.0, 0.5, 1.0)},
                   "world rows": len(world[: len(own)])}
        rows_path.with_suffix(".json").write_text(json.dumps(summary) + "\n", encoding="utf-8")
    command = fine_tune(start, run, rows_path, args.steps)
    fine_tune(start, control, world_rows(), args.steps)
    rows_summary = json.loads(rows_path.with_suffix(".json").read_text(encoding="utf-8"))
    of = "" if bundled else f"{label} "  # the bundled start keeps the entries of the first measurement
    proofs = "the start's proofs of test_in problems" if bundled else f"{label}'s own proofs of test_in problems"
    for name, model in (("start" if bundled else label, start),
                        (f"control: {of}fine-tuned on the world's rows", str(control / "final")),
                        (f"{of}fine-tuned on its own proofs and the world's rows", str(run / "final"))):
        folder = held_out / f"reward-signal-spread-{'start' if model == START_MODEL else Path(model).parent.name}"
        results = measure(held_out, WORLD, model, args.temperatures, 4, folder, spread_only=True)
        results.update({"command": "proofsmith " + " ".join(command), "rows": rows_summary})
        record(Path(args.out), f"{name}; {proofs}", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
