"""Per-request settings from a sampling config: every sample of a call gets a seed of its own."""

from __future__ import annotations

from engine.base import ChatMessage
from engine.config import SamplingConfig
from engine.sampling import make_requests, sample_seeds

PROMPTS = [(ChatMessage("user", f"Prove claim {index}."),) for index in range(4)]


def all_sample_seeds(requests) -> list[int]:
    return [seed for request in requests for seed in sample_seeds(request)]


def test_requests_of_n_samples_are_seeded_n_apart_so_no_two_samples_share_a_seed() -> None:
    requests = make_requests(PROMPTS, SamplingConfig(seed=10, temperature=0.5, top_p=0.9, max_tokens=64), n=3)
    assert [request.seed for request in requests] == [10, 13, 16, 19]
    assert all_sample_seeds(requests) == list(range(10, 22))
    assert {(r.n, r.temperature, r.top_p, r.max_tokens) for r in requests} == {(3, 0.5, 0.9, 64)}


def test_an_offset_counts_samples_so_calls_spaced_by_their_samples_never_overlap() -> None:
    sampling = SamplingConfig(seed=0)
    first = make_requests(PROMPTS, sampling, n=2)
    second = make_requests(PROMPTS, sampling, n=2, seed_offset=len(PROMPTS) * 2)
    seeds = all_sample_seeds(first) + all_sample_seeds(second)
    assert len(set(seeds)) == len(seeds) == 16


def test_one_sample_requests_keep_consecutive_seeds_and_no_seed_stays_unseeded() -> None:
    assert [request.seed for request in make_requests(PROMPTS, SamplingConfig(seed=5), seed_offset=100)] == [105, 106, 107, 108]
    unseeded = make_requests(PROMPTS, SamplingConfig(seed=None), n=4)
    assert {request.seed for request in unseeded} == {None} and all_sample_seeds(unseeded) == []
