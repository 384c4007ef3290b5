"""The engine contract: batched ``generate(requests) -> results``.

A request carries chat messages and its own sampling settings (``n``, temperature, top_p,
max_tokens, stop, seed); the result for request *i* is at index *i* and holds ``n``
completions. A completion's text excludes the stop string that ended it (OpenAI
semantics). Backends must send the whole batch at once so they can share prefills and
keep the hardware busy; callers should therefore batch a whole stage into one call.

Backends that serve many independent callers well (an HTTP client in front of a server
that batches continuously) also offer ``session()``: an async context whose
``generate`` can be awaited from many tasks at once, sharing one connection pool and one
concurrency bound, so a pipeline can move each item on as soon as its own requests return.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from data.errors import PromptTooLongError

Role = Literal["system", "user", "assistant"]
FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown chat role {self.role!r}")

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class GenerationRequest:
    messages: tuple[ChatMessage, ...]
    n: int = 1
    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a request needs at least one message")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "stop", tuple(self.stop))

    @classmethod
    def from_prompt(cls, messages: Sequence[ChatMessage], **sampling: object) -> GenerationRequest:
        return cls(messages=tuple(messages), **sampling)  # type: ignore[arg-type]

    def message_dicts(self) -> list[dict[str, str]]:
        return [message.to_dict() for message in self.messages]


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: FinishReason
    completion_tokens: int | None
    """Tokens generated for this completion; None only from a backend that cannot count them."""
    tokens_estimated: bool = False
    """True when ``completion_tokens`` is this completion's share of a total the server reported for all ``n``."""

    def __post_init__(self) -> None:
        if self.finish_reason not in ("stop", "length"):
            raise ValueError(f"unknown finish reason {self.finish_reason!r}")
        if self.completion_tokens is not None and self.completion_tokens < 0:
            raise ValueError(f"completion_tokens cannot be negative, got {self.completion_tokens}")


@dataclass(frozen=True)
class GenerationResult:
    completions: tuple[Completion, ...]
    prompt_tokens: int
    completion_tokens: int
    """Total over all completions of this request."""
    latency_s: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "completions", tuple(self.completions))


@runtime_checkable
class Engine(Protocol):
    """What every backend provides. ``name`` is the backend, ``model`` what it serves."""

    name: str
    model: str

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run every request; result *i* answers request *i* with ``requests[i].n`` completions."""
        ...

    def close(self) -> None:
        """Release the model, threads or connections; the engine is unusable afterwards."""
        ...


class EngineSession(Protocol):
    """Concurrent access to a streaming backend; see the module docstring."""

    concurrency: int
    """Most requests the session keeps in flight; callers need not queue more than this."""

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Like ``Engine.generate``; other tasks' calls run alongside."""
        ...


@runtime_checkable
class StreamingEngine(Engine, Protocol):
    def session(self) -> AbstractAsyncContextManager[EngineSession]:
        """Open a session; its connections close when the context ends."""
        ...


def raise_if_too_long(prompt_lengths: Sequence[int], context_length: int) -> None:
    """Refuse a batch in which some prompt leaves no room to generate, naming every such prompt."""
    too_long = tuple(index for index, length in enumerate(prompt_lengths) if length >= context_length)
    if too_long:
        first = too_long[0]
        more = f" (and {len(too_long) - 1} more)" if len(too_long) > 1 else ""
        raise PromptTooLongError(
            f"prompt {first} has {prompt_lengths[first]} tokens; the model's context holds {context_length}{more}", too_long
        )
