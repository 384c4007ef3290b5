"""Errors a user can cause and fix: bad input, a missing model, an unreachable server.

Every layer raises subclasses of :class:`ProofsmithError`; the CLI is the one place that
turns them into a one-line message and exit code 2. Anything else is a bug and keeps its
traceback (behind ``--debug``).
"""

from __future__ import annotations


class ProofsmithError(Exception):
    """A problem the user can act on; ``str(error)`` is the whole one-line message."""


class InputError(ProofsmithError):
    """An input file or value is missing, empty, unreadable or malformed."""


class ModelNotFoundError(ProofsmithError):
    """The requested model is neither a local path, the embedded model, nor reachable."""


class EngineUnavailableError(ProofsmithError):
    """A backend is not installed, or its server stayed unreachable after retries."""


class PromptTooLongError(ProofsmithError):
    """A prompt does not fit in the model's context window.

    ``indices`` names the requests of the failed batch that are too long (empty when the
    backend cannot tell), so a caller can set those aside and send the rest again.
    """

    def __init__(self, message: str, indices: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.indices = tuple(indices)


class TemplateError(ProofsmithError):
    """A prompt template is missing or names a placeholder nobody fills."""


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The first user-facing error in a (nested) exception group, else its first error."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        error = pending.pop(0)
        if isinstance(error, BaseExceptionGroup):
            pending[:0] = list(error.exceptions)
        else:
            leaves.append(error)
    return next((error for error in leaves if isinstance(error, ProofsmithError)), leaves[0])
