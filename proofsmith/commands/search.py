"""``proofsmith prove --search``: the pool search, in a resumable run directory."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from data.errors import InputError
from engine.auto import Workload
from proofsmith.commands.common import engine_record, open_engine
from proofsmith.config import Config, to_toml


def run_directory(path: str | None) -> Path:
    if not path:
        raise InputError("--search needs --out DIR: the pool and result are written there")
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--out {path} exists and is not a directory")
    if not directory.parent.is_dir():
        raise InputError(f"output directory does not exist: {directory.parent}")
    directory.mkdir(exist_ok=True)
    return directory


def run_search(args: argparse.Namespace, config: Config, problem: str) -> int:
    from tqdm import tqdm

    from generator.search import best, search

    directory = run_directory(args.out)
    settings = config.search
    (directory / "config.toml").write_text(to_toml(config), encoding="utf-8")
    (directory / "problem.txt").write_text(problem, encoding="utf-8")
    generated = settings.pool + settings.rounds * settings.top_k * settings.samples_per_pair
    workload = Workload(
        max(settings.pool, settings.top_k * settings.samples_per_pair) * settings.verify_samples,
        generated * (1 + settings.verify_samples) * config.sampling.max_tokens,
    )
    started = time.perf_counter()
    engine = open_engine(config, workload)
    try:
        with tqdm(total=settings.rounds + 1, desc="search rounds", unit="round", file=sys.stderr, disable=None) as progress:
            pool = search(
                engine, problem, settings, config.sampling, directory, config.prompts_dir or None,
                lambda round_number, added: progress.update(1),
            )
    finally:
        engine.close()
    winner = best(pool)
    passed = [c.id for c in pool if c.passes_all(settings.verify_samples)]
    result: dict[str, Any] = {
        "best": winner.to_record() if winner else None,
        "best_id": winner.id if winner else None,
        "mean_score": winner.mean_score if winner else None,
        "rounds_completed": max((c.round for c in pool), default=-1) + 1,
        "pool_size": len(pool),
        "full_passes": passed,
        "stopped": "full pass" if passed and settings.stop_at_full_pass else "round limit",
        "completion_tokens": sum(c.completion_tokens for c in pool),
        "elapsed_s": round(time.perf_counter() - started, 2),
        **engine_record(engine),
    }
    temporary = directory / "result.json.tmp"
    temporary.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    temporary.replace(directory / "result.json")
    if args.json:
        sys.stdout.write(json.dumps({key: value for key, value in result.items() if key != "best"}) + "\n")
    else:
        print("## Best proof\n")
        print(winner.proof if winner and winner.proof else "(the pool holds no proof)")
        mean = "none" if result["mean_score"] is None else f"{result['mean_score']:g}"
        print(
            f"\nmean verifier score: {mean}  rounds: {result['rounds_completed']}  pool: {result['pool_size']}"
            f"  stopped: {result['stopped']}  engine: {result['engine']}  model: {result['model']}  results: {directory}"
        )
    return 0
