"""High-compute proof search: a verified pool, refined from its best members.

Round 0 generates ``pool`` proofs and verifies each N times. Each later round takes the
top K proofs by mean score (ties: self-score, then the earlier proof), quotes up to
``analyses_per_prompt`` of each one's analyses in a refinement prompt (issue-finding ones
first: 0, then 0.5, then 1), generates ``samples_per_pair`` refinements per pair,
verifies them, and adds them to the pool. The search stops when a proof passes all N
verifications (if ``stop_at_full_pass``) or after ``rounds`` rounds. A proof whose
completion holds no proof text joins the pool unverified, with no score.

Every proof of a round is its own one-sample request (slot *i* of round *r*, seed
``seed + r·1,000,003 + i``), and its verification request's seed derives from the same
slot (``… + 500,000 + i·N``: a request of N samples seeds sample *j* with its seed + *j*
on vLLM, so each slot gets N seeds of its own), so a driver may send a proof's
verification the moment that proof returns, without waiting for the round's other proofs,
and still send exactly the requests a round-at-once driver sends.

:class:`ProblemSearch` holds one problem's search between engine calls, so that a driver
can send many problems' requests together (``generator.search_many``); :func:`search`
drives one problem, a round's proofs in one call and then their verifications in one call.
Token counts are the engines' per-completion counts (exact, or a flagged share of a
server's total: ``engine.token_counts``).

Nothing is lost: each round's proofs are appended to ``pool.jsonl`` and flushed, then
``state.json`` records the round as complete. A rerun with the same directory reloads the
pool of the complete rounds, drops the lines of a round in flight, and continues.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.records import mean_score, stable_id
from engine.base import Completion, Engine, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from engine.sampling import make_requests
from data.atomic import write_text_atomic
from data.jsonl import JsonlWriter, read_jsonl, write_jsonl
from generator.config import SEARCH_ROUND_SEED_STRIDE, SEARCH_VERIFICATION_SEED_OFFSET, SearchConfig
from generator.parse import GeneratedProof, parse_generation
from generator.final_proof import FinalProof
from generator.prompt import generation_messages, issues_first, refinement_messages
from verifier.parse import VERIFIER_FORMAT, parse_verdict
from verifier.verification import verification_requests, verifications_from


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


@dataclass(frozen=True)
class Draft:
    """One slot's generated proof, parsed, waiting for its verifications."""

    identity: str
    parents: tuple[str, ...]
    parsed: GeneratedProof
    completion: Completion


class ProblemSearch:
    """One problem's search as a state machine that never calls an engine itself.

    A round: :meth:`generation_requests` (one one-sample request per slot), then for each
    slot's answer :meth:`verification_request` (None when the completion holds no proof),
    in any order and as soon as that answer is in, then :meth:`finish_round` with the
    verification answers by slot, which writes the round to disk. Whatever the order and
    however the requests are batched, they and their seeds are the same, so :func:`search`,
    ``generator.search_many`` and a driver that verifies each proof as soon as it returns
    (``benchmarks/multi_problem_search.py --streamed``) build the same pools from the same
    engine answers.
    """

    def __init__(self, problem: str, config: SearchConfig, sampling: SamplingConfig, directory: Path,
                 prompts_dir: str | None = None) -> None:
        self.problem, self.config, self.sampling, self.prompts_dir = problem, config, sampling, prompts_dir
        self.state = SearchState(directory)
        self.pool, self.round = self.state.load()
        self._slots: list[tuple[tuple[str, ...], int]] = []
        self._drafts: dict[int, Draft] = {}

    @property
    def finished(self) -> bool:
        """No round left: the round limit is reached, or a proof passed all N (with ``stop_at_full_pass``)."""
        if self.round > self.config.rounds:
            return True
        return self.config.stop_at_full_pass and any(c.passes_all(self.config.verify_samples) for c in self.pool)

    def generation_requests(self) -> list[GenerationRequest]:
        """This round's proofs, one request per slot: the first pool, or the refinements of the top K (maybe none)."""
        config, round_number = self.config, self.round
        if round_number == 0:
            prompts = [generation_messages(self.problem, self.prompts_dir)]
            parents: list[tuple[str, ...]] = [()]
            samples = config.pool
        else:
            chosen = top_k(self.pool, config.top_k)
            prompts = [
                refinement_messages(self.problem, c.proof, quoted_analyses(
                    c, config.analyses_per_prompt, config.analysis_order,
                    random.Random(f"{self.sampling.seed}/{round_number}/{c.id}"),  # seeded: a rerun quotes the same
                ), self.prompts_dir)
                for c in chosen
            ]
            parents = [(c.id,) for c in chosen]
            samples = config.samples_per_pair
        self._slots = [(parent, sample) for parent in parents for sample in range(samples)]
        self._drafts = {}
        slot_prompts = [prompt for prompt in prompts for _ in range(samples)]
        return make_requests(slot_prompts, self.sampling, n=1, seed_offset=round_number * SEARCH_ROUND_SEED_STRIDE)

    def verification_request(self, slot: int, result: GenerationResult) -> GenerationRequest | None:
        """Parse slot ``slot``'s proof; the request that verifies it N times, or None when it holds no proof."""
        if not 0 <= slot < len(self._slots):
            raise ValueError(f"round {self.round} has slots 0..{len(self._slots) - 1}, not {slot}")
        if len(result.completions) != 1:
            raise ValueError(f"round {self.round}, slot {slot}: one completion expected, got {len(result.completions)}")
        parent, sample = self._slots[slot]
        (completion,) = result.completions
        parsed = parse_generation(completion.text, completion.finish_reason)
        identity = stable_id(self.problem, str(self.round), ",".join(parent), str(sample), completion.text)
        self._drafts[slot] = Draft(identity, parent, parsed, completion)
        if not parsed.proof:
            return None
        (request,) = verification_requests([(self.problem, parsed.proof)], self.config.verify_samples, self.sampling,
                                           self.prompts_dir,
                                           seed_offset=self.round * SEARCH_ROUND_SEED_STRIDE + SEARCH_VERIFICATION_SEED_OFFSET
                                           + slot * self.config.verify_samples)
        return request

    def verification_requests(self, results: Sequence[GenerationResult]) -> dict[int, GenerationRequest]:
        """:meth:`verification_request` for every slot of the round at once (result *i* answers slot *i*)."""
        requests = {}
        for slot, result in enumerate(results):
            request = self.verification_request(slot, result)
            if request is not None:
                requests[slot] = request
        return requests

    def finish_round(self, verified: Mapping[int, GenerationResult]) -> list[Candidate]:
        """Add the round's proofs, in slot order, with their verifications (by slot) to the pool and to disk."""
        if len(self._drafts) != len(self._slots):
            raise ValueError(f"round {self.round}: {len(self._slots) - len(self._drafts)} proofs were never parsed")
        if unknown := sorted(set(verified) - set(self._drafts)):
            raise ValueError(f"round {self.round}: verifications for slots {unknown}, which the round does not have")
        added = []
        for slot in range(len(self._slots)):
            draft = self._drafts[slot]
            result = verified.get(slot)
            if (result is None) == bool(draft.parsed.proof):
                raise ValueError(f"round {self.round}, slot {slot}: a verification for each proof, and only for proofs")
            verification = (verifications_from([result], [(self.problem, draft.parsed.proof)])[0]
                            if result is not None else None)
            parsed, completion = draft.parsed, draft.completion
            added.append(
                Candidate(
                    draft.identity, self.round, draft.parents, parsed.proof, parsed.self_score,
                    parsed.self_evaluation.analysis, completion.text, completion.finish_reason, parsed.all_format_errors,
                    tuple(analysis.to_dict() for analysis in verification.analyses) if verification else (),
                    (completion.completion_tokens or 0) + (verification.completion_tokens if verification else 0),
                    completion.tokens_estimated or bool(verification and verification.tokens_estimated),
                )
            )
        self.state.append_round(added, self.round)
        self.pool.extend(added)
        self.round += 1
        self._slots, self._drafts = [], {}
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
        answers = engine.generate(list(checks.values())) if checks else []
        added = run.finish_round(dict(zip(checks, answers, strict=True)))
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
