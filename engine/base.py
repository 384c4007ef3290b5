"""The engine contract: batched ``generate(requests) -> results``.

A request carries chat messages and its own sampling settings (``n``, temperature, top_p,
max_tokens, stop, seed); the result for request *i* is at index *i* and holds ``n``
completions. A completion's text excludes the stop string that ended it (OpenAI
semantics). Backends must send the whole batch at once so they can share prefills and
keep the hardware busy; callers should therefore batch a whole stage into one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

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
    """Tokens generated for this completion; None when the server only reports a total."""

    def __post_init__(self) -> None:
        if self.finish_reason not in ("stop", "length"):
            raise ValueError(f"unknown finish reason {self.finish_reason!r}")


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
