"""High-compute proof search: a verified pool, refined from its best members.

Round 0 generates ``pool`` proofs (one request, ``n=pool``) and verifies each N times.
Each later round takes the top K proofs by mean score (ties: self-score, then the
earlier proof), quotes up to ``analyses_per_prompt`` of each one's analyses in a
refinement prompt (issue-finding ones first: 0, then 0.5, then 1), generates
``samples_per_pair`` refinements per pair, verifies them, and adds them to the pool. The
search stops when a proof passes all N verifications (if ``stop_at_full_pass``) or after
``rounds`` rounds. A proof whose completion holds no proof text joins the pool unverified,
with no score.

:class:`ProblemSearch` holds one problem's search between engine calls, so that a driver
can send many problems' requests together (``generator.search_many``); :func:`search`
drives one problem. Token counts are the engines' per-completion counts (exact, or a
flagged share of a server's total: ``engine.token_counts``).

Nothing is lost: each round's proofs are appended to ``pool.jsonl`` and flushed, then
``state.json`` records the round as complete. A rerun with the same directory reloads the
pool of the complete rounds, drops the lines of a round in flight, and continues.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.records import mean_score, stable_id
from engine.base import Completion, Engine, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import make_requests
from data.atomic import write_text_atomic
from data.jsonl import JsonlWriter, read_jsonl, write_jsonl
from generator.config import SearchConfig
from generator.parse import parse_generation
from generator.final_proof import FinalProof
from generator.prompt import generation_messages, issues_first, refinement_messages
from verifier.parse import VERIFIER_FORMAT, parse_verdict
from verifier.verification import verification_requests, verifications_from

ROUND_SEED_STRIDE = 1_000_003


@dataclass(frozen=True)
class Candidate:
    """One proof in the pool, as stored in ``pool.jsonl``."""

    id: str
    round: int
    parents: tuple[str, ...]
    proof: str
    self_score: float | None
    self_evaluation: str
    completion: str
    finish_reason: str
    format_errors: tuple[str, ...]
    analyses: tuple[dict[str, Any], ...]
    """Verifier samples: ``Analysis.to_dict()`` records (score, analysis, format_errors, ...)."""
    completion_tokens: int
    """Tokens of the proof's completion and of all its verifications."""
    tokens_estimated: bool = False
    """True when some of those counts are a share of a server's total (``engine.token_counts``)."""

    @property
    def scores(self) -> list[float | None]:
        return [analysis["score"] for analysis in self.analyses]

    @property
    def mean_score(self) -> float | None:
        return mean_score(self.scores)

    def passes_all(self, verify_samples: int) -> bool:
        return len(self.analyses) == verify_samples and all(score == 1.0 for score in self.scores)

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id, "round": self.round, "parents": list(self.parents), "proof": self.proof,
            "self_score": self.self_score, "self_evaluation": self.self_evaluation, "mean_score": self.mean_score,
            "scores": self.scores, "analyses": list(self.analyses), "completion": self.completion,
            "finish_reason": self.finish_reason, "format_errors": list(self.format_errors),
            "completion_tokens": self.completion_tokens, "tokens_estimated": self.tokens_estimated,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Candidate:
        return cls(
            record["id"], record["round"], tuple(record["parents"]), record["proof"], record["self_score"],
            record["self_evaluation"], record["completion"], record["finish_reason"], tuple(record["format_errors"]),
            tuple(record["analyses"]), record["completion_tokens"], record.get("tokens_estimated", False),
        )


def rank_key(candidate: Candidate, position: int) -> tuple[float, float, int]:
    """Sort key, best first: mean score, then self-score, then the earlier proof."""
    mean = -1.0 if candidate.mean_score is None else candidate.mean_score
    self_score = -1.0 if candidate.self_score is None else candidate.self_score
    return (-mean, -self_score, position)


def ranked(pool: list[Candidate]) -> list[Candidate]:
    """The pool, best first, by :func:`rank_key`."""
    order = sorted(range(len(pool)), key=lambda position: rank_key(pool[position], position))
    return [pool[position] for position in order]


def top_k(pool: list[Candidate], k: int) -> list[Candidate]:
    """The k best verified proofs with text."""
    return [candidate for candidate in ranked(pool) if candidate.proof and candidate.analyses][:k]


def visible_analysis(text: str) -> str:
    """What a refinement prompt quotes of a verifier sample: its analysis, without any think block or verdict line."""
    return parse_verdict(text, VERIFIER_FORMAT).analysis or text


def quoted_analyses(candidate: Candidate, limit: int, order: str, draw: random.Random | None = None) -> list[tuple[str, float | None]]:
    """The (analysis, score) pairs a refinement prompt quotes, issue-finding first unless ``order='sampled'``.

    With ``draw``, which analyses of one score come first is drawn afresh (a parent chosen
    again in a later round is shown other analyses of the same score, when it has them).
    """
    quoted = [(visible_analysis(analysis["analysis"]), analysis["score"]) for analysis in candidate.analyses]
    if order == "issues-first":
        if draw is not None:
            draw.shuffle(quoted)
        quoted = issues_first(quoted)
    return quoted[:limit]


class SearchState:
    """``pool.jsonl`` plus ``state.json`` in one directory; see the module docstring."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.pool_path = directory / "pool.jsonl"
        self.state_path = directory / "state.json"

    def load(self) -> tuple[list[Candidate], int]:
        """The pool of complete rounds and the next round to run (0 on a fresh directory)."""
        if not self.state_path.exists():
            if self.pool_path.exists():
                self.pool_path.write_text("", encoding="utf-8")
            return [], 0
        completed = json.loads(self.state_path.read_text(encoding="utf-8"))["completed_rounds"]
        kept = [record for record in read_jsonl(self.pool_path) if record["round"] < completed]
        write_jsonl(self.pool_path, kept)  # without the round in flight, nor a line cut off by a kill
        return [Candidate.from_record(record) for record in kept], completed

    def append_round(self, candidates: list[Candidate], round_number: int) -> None:
        with JsonlWriter(self.pool_path) as writer:
            for candidate in candidates:
                writer.write(candidate.to_record())
            writer.sync()  # the pool is on disk before state.json says the round is complete
        write_text_atomic(self.state_path, json.dumps({"completed_rounds": round_number + 1}))


class ProblemSearch:
    """One problem's search as a state machine that never calls an engine itself.

    Each round is two steps: :meth:`generation_requests` (the round's proofs), then
    :meth:`verification_requests` with their answers (the new proofs' verifications), then
    :meth:`finish_round` with those answers, which writes the round to disk. A driver sends
    the requests: :func:`search` one problem at a time, ``generator.search_many`` many
    problems' requests in one engine call. The requests and seeds are the same either way.
    """

    def __init__(self, problem: str, config: SearchConfig, sampling: SamplingConfig, directory: Path,
                 prompts_dir: str | None = None) -> None:
        self.problem, self.config, self.sampling, self.prompts_dir = problem, config, sampling, prompts_dir
        self.state = SearchState(directory)
        self.pool, self.round = self.state.load()
        self._parents: list[tuple[str, ...]] = []
        self._drafts: list[tuple[str, tuple[str, ...], Any, Completion]] = []
        self._checkable: list[int] = []

    @property
    def finished(self) -> bool:
        """No round left: the round limit is reached, or a proof passed all N (with ``stop_at_full_pass``)."""
        if self.round > self.config.rounds:
            return True
        return self.config.stop_at_full_pass and any(c.passes_all(self.config.verify_samples) for c in self.pool)

    def generation_requests(self) -> list[GenerationRequest]:
        """This round's generation requests: the first pool, or one refinement per top-K proof (maybe none)."""
        config, round_number = self.config, self.round
        if round_number == 0:
            prompts = [generation_messages(self.problem, self.prompts_dir)]
            self._parents = [()]
            n = config.pool
        else:
            chosen = top_k(self.pool, config.top_k)
            prompts = [
                refinement_messages(self.problem, c.proof, quoted_analyses(
                    c, config.analyses_per_prompt, config.analysis_order,
                    random.Random(f"{self.sampling.seed}/{round_number}/{c.id}"),  # seeded: a rerun quotes the same
                ), self.prompts_dir)
                for c in chosen
            ]
            self._parents = [(c.id,) for c in chosen]
            n = config.samples_per_pair
        return make_requests(prompts, self.sampling, n=n, seed_offset=round_number * ROUND_SEED_STRIDE)

    def verification_requests(self, results: Sequence[GenerationResult]) -> list[GenerationRequest]:
        """Parse the round's generations; the requests that verify each one holding a proof (N samples each)."""
        self._drafts = []
        for result, parent in zip(results, self._parents, strict=True):
            for sample, completion in enumerate(result.completions):
                parsed = parse_generation(completion.text, completion.finish_reason)
                identity = stable_id(self.problem, str(self.round), ",".join(parent), str(sample), completion.text)
                self._drafts.append((identity, parent, parsed, completion))
        self._checkable = [index for index, (_, _, parsed, _) in enumerate(self._drafts) if parsed.proof]
        return verification_requests(self._items(), self.config.verify_samples, self.sampling, self.prompts_dir,
                                     seed_offset=self.round * ROUND_SEED_STRIDE + 500_000)

    def _items(self) -> list[tuple[str, str]]:
        return [(self.problem, self._drafts[index][2].proof) for index in self._checkable]

    def finish_round(self, results: Sequence[GenerationResult]) -> list[Candidate]:
        """Add the round's proofs with their verifications to the pool and to disk; returns them."""
        by_index = dict(zip(self._checkable, verifications_from(results, self._items()), strict=True))
        added = []
        for index, (identity, parent, parsed, completion) in enumerate(self._drafts):
            verification = by_index.get(index)
            added.append(
                Candidate(
                    identity, self.round, parent, parsed.proof, parsed.self_score, parsed.self_evaluation.analysis,
                    completion.text, completion.finish_reason, parsed.all_format_errors,
                    tuple(analysis.to_dict() for analysis in verification.analyses) if verification else (),
                    (completion.completion_tokens or 0) + (verification.completion_tokens if verification else 0),
                    completion.tokens_estimated or bool(verification and verification.tokens_estimated),
                )
            )
        self.state.append_round(added, self.round)
        self.pool.extend(added)
        self.round += 1
        self._drafts, self._checkable, self._parents = [], [], []
        return added


def search(
    engine: Engine,
    problem: str,
    config: SearchConfig,
    sampling: SamplingConfig,
    directory: Path,
    prompts_dir: str | None = None,
    on_round: Callable[[int, list[Candidate]], None] | None = None,
) -> list[Candidate]:
    """Run (or resume) the search in ``directory``; returns the whole pool."""
    run = ProblemSearch(problem, config, sampling, directory, prompts_dir)
    while not run.finished:
        round_number = run.round
        generations = run.generation_requests()
        checks = run.verification_requests(engine.generate(generations) if generations else [])
        added = run.finish_round(engine.generate(checks) if checks else [])
        if on_round is not None:
            on_round(round_number, added)
    return run.pool


def best(pool: list[Candidate]) -> Candidate | None:
    return next(iter(ranked(pool)), None)


def full_passes(pool: list[Candidate], verify_samples: int) -> list[str]:
    """Ids of the proofs every one of their ``verify_samples`` verifications scored 1."""
    return [candidate.id for candidate in pool if candidate.passes_all(verify_samples)]


def final_proof(pool: list[Candidate], config: SearchConfig) -> FinalProof:
    """The search's answer: its best proof (:func:`best`), the rounds run and the tokens of the whole pool."""
    winner = best(pool)
    stopped = "full pass" if config.stop_at_full_pass and full_passes(pool, config.verify_samples) else "round limit"
    rounds = max((candidate.round for candidate in pool), default=-1) + 1
    tokens = sum(candidate.completion_tokens for candidate in pool)
    estimated = any(candidate.tokens_estimated for candidate in pool)
    if winner is None:
        return FinalProof("", "", None, None, ("the pool holds no proof",), rounds, stopped, tokens, estimated)
    return FinalProof(winner.proof, winner.self_evaluation, winner.self_score, winner.mean_score, winner.format_errors,
                      rounds, stopped, tokens, estimated)
