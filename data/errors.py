"""Errors a user can cause and fix: bad input, a missing model, an unreachable server.

Every layer raises subclasses of :class:`ProofsmithError`; the CLI is the one place that
turns them into a one-line message and exit code 2. Anything else is a bug and keeps its
traceback (behind ``--debug``).
"""


class ProofsmithError(Exception):
    """A problem the user can act on; ``str(error)`` is the whole one-line message."""


class InputError(ProofsmithError):
    """An input file or value is missing, empty, unreadable or malformed."""


class ModelNotFoundError(ProofsmithError):
    """The requested model is neither a local path, the embedded model, nor reachable."""


class EngineUnavailableError(ProofsmithError):
    """A backend is not installed, or its server stayed unreachable after retries."""


class PromptTooLongError(ProofsmithError):
    """A prompt does not fit in the model's context window."""


class TemplateError(ProofsmithError):
    """A prompt template is missing or names a placeholder nobody fills."""
