"""Run a calibration: k proofs per world problem and k analyses per world proof, judged by the checker, resumably.

Reads a world directory (``SPLIT_problems.jsonl``: problems with their goal; ``SPLIT.jsonl``:
proofs with their true score and first bad step) and writes, in ``OUT``:

    generations.jsonl     one record per problem: the k samples' self-scores, whether each
                          parsed, and whether the checker passes the proof it wrote
    verifications.jsonl   one record per proof: its truth and the k analyses (score, text)

(``roles`` picks which of the two are written.)

Records are appended chunk by chunk (``chunk_size`` requests per engine call), so a killed run
loses at most one chunk; a rerun skips the ids already written. The metrics are
``eval.calibration``'s. Seeds: problem p of a split's generations has the seeds from
``seed + p·k``; verifications start after every generation seed of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.jsonl import JsonlWriter, read_jsonl
from engine.base import Engine, GenerationResult
from engine.config import SamplingConfig
from engine.fitting import generate_fitting
from engine.sampling import make_requests
from eval.config import CalibrationConfig
from generator.parse import parse_generation
from generator.prompt import generation_messages
from verifier.parse import parse_verdict
from verifier.prompt import verification_messages

GENERATIONS = "generations.jsonl"
VERIFICATIONS = "verifications.jsonl"


def level_of(row: Mapping[str, Any]) -> int:
    """The row's difficulty level (rows of worlds written before levels existed are level 1)."""
    value = row.get("difficulty", row.get("level"))
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def training_templates(data: Path) -> set[tuple[str, str]] | None:
    """(family, template) pairs of the world's training problems (its problems' ``category`` and ``level``, the
    template's name); None when the world has no training split to compare with."""
    path = data / "train_problems.jsonl"
    if not path.is_file():
        return None
    return {(str(row.get("category", "")), str(row.get("level", ""))) for row in read_jsonl(path)}


def read_split(data: Path, split: str, seen: set[tuple[str, str]] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(problems, proofs) of one split of a world directory; a missing file is one input error. With ``seen``
    (``training_templates``), every row says whether its template is one the training split draws from
    (``templates``: ``seen`` or ``held-out``)."""
    problems_path, proofs_path = data / f"{split}_problems.jsonl", data / f"{split}.jsonl"
    for path in (problems_path, proofs_path):
        if not path.is_file():
            raise InputError(f"{path} not found: DATA must be a world directory (proofsmith world --out DIR) with split {split!r}")

    def templates(row: Mapping[str, Any]) -> dict[str, str]:
        if seen is None:
            return {}
        return {"templates": "seen" if (row["family"], row["template"]) in seen else "held-out"}

    proofs = [{**row, "split": split, "level": level_of(row)} for row in read_jsonl(proofs_path)]
    proofs = [{**row, **templates(row)} for row in proofs]
    family = {row["problem_id"]: row for row in proofs}
    problems = []
    for row in read_jsonl(problems_path):
        source = family.get(row["id"], {})
        if not row.get("goal"):
            raise InputError(f"{problems_path}: problem {row.get('id')!r} has no goal: not world data")
        problem = {**row, "split": split, "family": source.get("family", row.get("category", "")),
                   "template": source.get("template", ""), "level": source.get("level", 1)}
        problems.append({**problem, **templates(problem)})
    return problems, proofs


def capped(problems: list[dict[str, Any]], proofs: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """At most ``limit`` problems per (family, level, templates), taken from its templates in turn (a split lists
    each template's problems together, so the first ``limit`` would be one template), and only their proofs
    (0: everything)."""
    if not limit:
        return problems, proofs
    queues: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = {}
    for problem in problems:
        key = (problem["family"], problem["level"], problem.get("templates", ""))
        queues.setdefault(key, {}).setdefault(problem["template"], []).append(problem)
    chosen: set[str] = set()
    for by_template in queues.values():
        taken, turn = 0, 0
        while taken < limit and any(turn < len(queue) for queue in by_template.values()):
            for queue in by_template.values():
                if turn < len(queue) and taken < limit:
                    chosen.add(queue[turn]["id"])
                    taken += 1
            turn += 1
    return [problem for problem in problems if problem["id"] in chosen], [proof for proof in proofs if proof["problem_id"] in chosen]


def origin(row: Mapping[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("id", "split", "family", "level", "template", "templates") if key in row}


def generation_record(problem: Mapping[str, Any], result: GenerationResult | None, refused: str | None) -> dict[str, Any]:
    from data.world.checker import check_goal

    if result is None:
        return {**origin(problem), "error": refused, "passes": [], "formats_ok": [], "self_scores": []}
    parsed = [parse_generation(completion.text, completion.finish_reason) for completion in result.completions]
    passes = [bool(item.proof) and check_goal(problem["goal"], item.proof).score == 1.0 for item in parsed]
    return {**origin(problem), "passes": passes, "formats_ok": [item.format_ok for item in parsed],
            "self_scores": [item.self_score for item in parsed], "proofs": [item.proof for item in parsed],
            "completion_tokens": result.completion_tokens}


def verification_record(proof: Mapping[str, Any], result: GenerationResult | None, refused: str | None) -> dict[str, Any]:
    from data.world.steps import step_count

    truth = {"score": proof["score"], "first_bad_step": proof["first_bad_step"], "steps": step_count(proof["proof"])}
    if result is None:
        return {**origin(proof), "truth": truth, "error": refused, "analyses": []}
    quoted = (proof["problem"], proof["proof"])
    analyses = []
    for completion in result.completions:
        verdict = parse_verdict(completion.text, finish_reason=completion.finish_reason, quoted=quoted)
        analyses.append({"score": verdict.score, "analysis": completion.text})
    return {**origin(proof), "truth": truth, "analyses": analyses, "completion_tokens": result.completion_tokens}


def sampled_pass_rates(engine: Engine, problems: Sequence[Mapping[str, Any]], sampling: SamplingConfig, samples: int,
                       prompts_dir: str | None = None) -> dict[str, float]:
    """Each problem's true pass rate over ``samples`` proofs sampled in one engine call (problem p: the seeds from
    ``seed + p·samples``, as a calibration's generations), judged by the checker; a refused prompt counts 0."""
    requests = [make_requests([generation_messages(problem["problem"], prompts_dir)], sampling, samples, position * samples)[0]
                for position, problem in enumerate(problems)]
    results, refused = generate_fitting(engine, requests)
    records = [generation_record(problem, results[index], refused.get(index)) for index, problem in enumerate(problems)]
    return {str(record["id"]): sum(record["passes"]) / samples for record in records}


def run_stage(engine: Engine, rows: Sequence[Mapping[str, Any]], path: Path, messages: Callable[[Mapping[str, Any]], Any],
              record: Callable[[Mapping[str, Any], GenerationResult | None, str | None], dict[str, Any]],
              settings: CalibrationConfig, sampling: SamplingConfig, seed_offset: int, progress: Any) -> list[dict[str, Any]]:
    """Every row's record, reading back those already in ``path`` and writing the others chunk by chunk."""
    done = {record_["id"]: record_ for record_ in read_jsonl(path)} if path.exists() else {}
    positions = {row["id"]: position for position, row in enumerate(rows)}
    todo = [row for row in rows if row["id"] not in done]
    progress.update(len(rows) - len(todo))
    with JsonlWriter(path) as writer:
        for start in range(0, len(todo), settings.chunk_size):
            chunk = todo[start: start + settings.chunk_size]
            requests = [make_requests([messages(row)], sampling, settings.samples,
                                      seed_offset + positions[row["id"]] * settings.samples)[0] for row in chunk]
            results, refused = generate_fitting(engine, requests)
            for index, row in enumerate(chunk):
                done[row["id"]] = record(row, results[index], refused.get(index))
                writer.write(done[row["id"]])
            progress.update(len(chunk))
    return [{**done[row["id"]], **origin(row)} for row in rows]  # records of an older run gain today's labels


def run_calibration(engine: Engine, settings: CalibrationConfig, sampling: SamplingConfig, prompts_dir: str | None,
                    out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(generation records, verification records) of every split of ``settings``."""
    from engine.progress import Progress

    problems: list[dict[str, Any]] = []
    proofs: list[dict[str, Any]] = []
    seen = training_templates(Path(settings.data))
    for split in settings.splits:
        split_problems, split_proofs = capped(*read_split(Path(settings.data), split, seen), settings.max_problems_per_group)
        problems += split_problems
        proofs += split_proofs
    generations: list[dict[str, Any]] = []
    verifications: list[dict[str, Any]] = []
    if "generator" in settings.roles:
        with Progress("calibrate: generate", len(problems), "problem") as progress:
            generations = run_stage(engine, problems, out / GENERATIONS,
                                    lambda row: generation_messages(row["problem"], prompts_dir), generation_record,
                                    settings, sampling, 0, progress)
    if "verifier" in settings.roles:
        # The seeds start after every generation seed whether or not the generations are sampled, so a
        # verifier-only run samples the analyses a full run would.
        with Progress("calibrate: verify", len(proofs), "proof") as progress:
            verifications = run_stage(engine, proofs, out / VERIFICATIONS,
                                      lambda row: verification_messages(row["problem"], row["proof"], prompts_dir),
                                      verification_record, settings, sampling, len(problems) * settings.samples, progress)
    return generations, verifications


def split_problems(settings: CalibrationConfig) -> list[dict[str, Any]]:
    """Every problem of the calibrated splits (not only the measured ones), each with its split, family, level
    and seen or held-out templates: what the edge groups select from."""
    seen = training_templates(Path(settings.data))
    return [problem for split in settings.splits for problem in read_split(Path(settings.data), split, seen)[0]]
