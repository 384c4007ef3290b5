"""Engine sizing for each command: what it is about to ask of the engine, as a :class:`Workload`.

A workload has two numbers: the sequences one engine call decodes together (the engine
sizes its batch and, on the auto backend, picks a backend by it) and an upper bound on the
tokens the whole command generates (every completion at ``max_tokens``). Each function
below counts them for one command from its resolved settings, and nothing else; the
commands call them just before opening an engine.
"""

from __future__ import annotations

from engine.auto import Workload
from eval.config import GraderConfig
from generator.config import RefineConfig, SearchConfig
from training.auto_labeling.config import LabelConfig


def verify_workload(samples: int, max_tokens: int) -> Workload:
    """``verify`` / ``meta-verify``: one prompt with ``samples`` completions, all decoded together."""
    return Workload(samples, samples * max_tokens)


def refine_workload(settings: RefineConfig, max_tokens: int, problems: int = 1) -> Workload:
    """``prove`` (sequential refinement) of ``problems`` problems.

    Together: one sequence per thread, or each thread's ``verify_samples`` verifications with
    verifier feedback. In all: every thread's every round, plus its verifications.
    """
    verifying = settings.feedback == "verifier"
    per_round = 1 + (settings.verify_samples if verifying else 0)
    return Workload(settings.samples * (settings.verify_samples if verifying else 1),
                    problems * settings.samples * settings.max_rounds * per_round * max_tokens)


def search_workload(settings: SearchConfig, max_tokens: int, problems: int = 1) -> Workload:
    """``prove --search`` of ``problems`` problems, searched together (``generator.search_many``).

    Together: every problem's verifications of the larger round (the first pool, or top K
    times the samples per pair), N each. In all: every proof the rounds can generate, each
    verified N times.
    """
    generated = settings.pool + settings.rounds * settings.top_k * settings.samples_per_pair
    return Workload(problems * max(settings.pool, settings.top_k * settings.samples_per_pair) * settings.verify_samples,
                    problems * generated * (1 + settings.verify_samples) * max_tokens)


def label_workload(settings: LabelConfig, proofs: int, max_tokens: int) -> Workload:
    """``label`` and ``eval verifier`` of ``proofs`` proofs.

    Together: one chunk's n verifications per proof. In all: n verifications per proof and,
    at most, m meta-verifications of each.
    """
    return Workload(settings.chunk_size * settings.n, proofs * settings.n * (1 + settings.m) * max_tokens)


def grader_workload(settings: GraderConfig, problems: int) -> Workload:
    """The grader of ``eval prover`` on its own engine: ``samples`` markings per problem, one problem at a time."""
    return Workload(settings.samples, problems * settings.samples * settings.max_tokens)


def selection_workload(pairs_per_call: int, samples: int, pairs: int, max_tokens: int) -> Workload:
    """``eval selection``: one chunk's two proofs per pair, ``samples`` verifications each, together; the same for every pair in all."""
    return Workload(2 * pairs_per_call * samples, 2 * pairs * samples * max_tokens)
