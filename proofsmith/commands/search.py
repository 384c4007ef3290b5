"""``proofsmith prove --search``: the pool search, in a resumable run directory."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.atomic import write_text_atomic
from data.errors import InputError
from engine.progress import Progress
from proofsmith.commands.common import engine_record, open_engine
from proofsmith.config import Config, to_toml
from proofsmith.workloads import search_workload

if TYPE_CHECKING:
    from generator.config import SearchConfig
    from generator.search import Candidate


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
    from generator.prompt import generation_messages
    from generator.search import final_proof, search

    directory = run_directory(args.out)
    settings = config.search
    (directory / "config.toml").write_text(to_toml(config), encoding="utf-8")
    (directory / "problem.txt").write_text(problem, encoding="utf-8")
    started = time.perf_counter()
    first_prompt = generation_messages(problem, config.prompts_dir or None)
    engine = open_engine(config, search_workload(settings, config.sampling.max_tokens), [first_prompt])
    try:
        with Progress("search", settings.rounds + 1, "round") as progress:
            pool = search(
                engine, problem, settings, config.sampling, directory, config.prompts_dir or None,
                lambda round_number, added: progress.update(1),
            )
    finally:
        engine.close()
    result = write_result(directory, pool, settings, time.perf_counter() - started, engine_record(engine))
    final = final_proof(pool, settings)
    if args.json:
        sys.stdout.write(json.dumps({key: value for key, value in result.items() if key != "best"}) + "\n")
    else:
        print("## Best proof\n")
        print(final.proof or "(the pool holds no proof)")
        mean = "none" if final.verifier_mean is None else f"{final.verifier_mean:g}"
        print(
            f"\nmean verifier score: {mean}  rounds: {final.rounds}  pool: {result['pool_size']}"
            f"  stopped: {result['stopped']}  engine: {result['engine']}  model: {result['model']}  results: {directory}"
        )
    return 0


def write_result(directory: Path, pool: list[Candidate], settings: SearchConfig, elapsed_s: float,
                 engine: dict[str, Any]) -> dict[str, Any]:
    """``result.json`` of one search (written atomically): the final proof, the best record, the pool's size and passes."""
    from generator.search import best, final_proof, full_passes

    winner, final = best(pool), final_proof(pool, settings)
    result: dict[str, Any] = {
        **final.to_dict(),
        "best": winner.to_record() if winner else None,
        "best_id": winner.id if winner else None,
        "pool_size": len(pool),
        "full_passes": full_passes(pool, settings.verify_samples),
        "elapsed_s": round(elapsed_s, 2),
        **engine,
    }
    write_text_atomic(directory / "result.json", json.dumps(result, ensure_ascii=False, indent=2))
    return result
