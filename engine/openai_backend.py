"""Client for any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp, APIs).

All requests of a call are in flight together, bounded by ``max_concurrency``; each asks
the server for its ``n`` samples in one request so the prompt's prefill is shared.

Several base URLs form a pool (``engine.url_pool``): each request goes to the server with the
fewest of this engine's requests in flight (ties round-robin). A connection error, a timeout
or a 5xx takes that server out of the pool for a cool-down and the retry goes at once to
another server that is up; only when none is up (or on a 429, the server asking to slow down)
does the retry wait, with exponential backoff and jitter. A down server gets one request again
after its cool-down and rejoins when it answers. A request tries at most ``max_retries + 1``
times in all; when one has used them up the whole call fails with a one-line
``EngineUnavailableError``. Other 4xx answers are not retried: they name a problem in the
request (too long a prompt, an unknown model, a bad key).

Token counts follow ``engine.token_counts``: a request with ``n > 1`` asks for each choice's
``token_ids`` (vLLM's ``return_token_ids``) so every completion's count is exact; a server
that refuses that field (400/422 naming it) is asked again without it, for the rest of the
engine's life, and its totals are split across the choices and flagged as estimates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from data.errors import EngineUnavailableError, InputError, ModelNotFoundError, PromptTooLongError, first_error
from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import EngineConfig
from engine.model_store import EMBEDDED
from engine.progress import GenerationProgress, RetryProgress
from engine.token_counts import choice_token_counts
from engine.url_pool import ServerStats, UrlPool

logger = logging.getLogger(__name__)

TOKEN_IDS_FIELD = "return_token_ids"
"""vLLM's request field that adds each choice's generated ``token_ids`` to the answer."""
_CONTEXT_MARKERS = ("maximum context length", "longer than the maximum model length", "context length", "too long")


def error_message(response: Any) -> str:
    """The server's own words from an error answer, whatever shape its JSON has."""
    try:
        detail = response.json()
    except ValueError:
        return str(response.text)
    if isinstance(detail, dict):
        inner = detail.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        return str(detail.get("message") or inner or detail)
    return str(detail)


class OpenAIEngine:
    name = "openai"

    def __init__(self, config: EngineConfig) -> None:
        if not config.base_urls:
            raise InputError("the openai engine needs a server: pass --base-url http://HOST:PORT/v1")
        self.base_urls = list(dict.fromkeys(url.rstrip("/") for url in config.base_urls))
        self.pool = UrlPool(self.base_urls)
        self.config = config
        self.api_key = os.environ.get(config.api_key_env) or None
        self.model = config.model
        self._model_known = config.model != EMBEDDED
        self.context_length: int | None = None
        self.ask_token_ids = True
        """Whether requests with n > 1 ask for per-choice token ids; turned off when a server refuses the field."""
        self.retry_progress = RetryProgress(f"{self.name}: waiting for {self.base_urls[0] if len(self.base_urls) == 1 else 'a server'}",
                                            config.max_retries + 1)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.agenerate(requests))
        raise RuntimeError("OpenAIEngine.generate was called inside an event loop; await agenerate() instead")

    async def agenerate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        if not requests:
            return []
        with GenerationProgress(self.name, len(requests)) as progress:
            async with self.session() as session:
                return await session.generate(requests, progress)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[OpenAISession]:
        """One connection pool and one ``max_concurrency`` bound for every call made through it."""
        import httpx

        limits = httpx.Limits(max_connections=self.config.max_concurrency, max_keepalive_connections=self.config.max_concurrency)
        async with httpx.AsyncClient(limits=limits, timeout=self.config.request_timeout_s) as client:
            if not self._model_known:
                await self._discover_model(client)
            yield OpenAISession(self, client, asyncio.Semaphore(self.config.max_concurrency))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    async def _discover_model(self, client: Any) -> None:
        """With ``--model embedded`` (the default), use whatever model the server serves."""
        response = await self._send(client, "GET", "/models", None)
        models = response.get("data") or []
        if not models:
            raise ModelNotFoundError(f"{self.base_urls[0]} serves no model")
        self.model = models[0]["id"]
        self.context_length = models[0].get("max_model_len")
        self._model_known = True

    async def _complete(self, client: Any, semaphore: asyncio.Semaphore, request: GenerationRequest, index: int,
                        progress: GenerationProgress | None = None) -> GenerationResult:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": request.message_dicts(),
            "n": request.n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            payload["stop"] = list(request.stop)
        if request.seed is not None:
            payload["seed"] = request.seed
        async with semaphore:
            started = time.perf_counter()
            try:
                body = await self._send_chat(client, payload, request.n)
            except PromptTooLongError as error:
                raise PromptTooLongError(str(error), (index,)) from None
            latency = time.perf_counter() - started
        result = self._to_result(body, request, latency)
        if progress is not None:
            progress.add(requests=1, tokens=result.completion_tokens)
        return result

    async def _send_chat(self, client: Any, payload: dict[str, Any], n: int) -> dict[str, Any]:
        """POST one chat request; with n > 1 ask for per-choice token ids unless this server refused them before."""
        if n > 1 and self.ask_token_ids:
            try:
                return await self._send(client, "POST", "/chat/completions", {**payload, TOKEN_IDS_FIELD: True})
            except EngineUnavailableError as error:
                if TOKEN_IDS_FIELD not in str(error) or not any(f"HTTP {code}" in str(error) for code in (400, 422)):
                    raise
                logger.warning("the server does not take %s; token counts of n > 1 requests are estimates", TOKEN_IDS_FIELD)
                self.ask_token_ids = False
        return await self._send(client, "POST", "/chat/completions", payload)

    async def _send(self, client: Any, method: str, path: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        import httpx

        attempts = self.config.max_retries + 1
        last_problem, previous, backoffs, shown = "", None, 0, False
        try:
            for attempt in range(attempts):
                lease = self.pool.acquire(avoid=previous)
                previous, url = lease.url, lease.url + path
                server_failed = False
                try:
                    response = await client.request(method, url, json=payload, headers=self._headers())
                except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
                    self.pool.abandoned(lease)
                    raise InputError(f"invalid --base-url {url}: {error}") from None
                except httpx.TransportError as error:  # timeouts included
                    last_problem, server_failed = f"{url}: {type(error).__name__} {error}".strip(), True
                except BaseException:  # cancelled (a sibling request failed): says nothing about the server
                    self.pool.abandoned(lease)
                    raise
                else:
                    if response.status_code >= 500:
                        last_problem, server_failed = f"{url}: HTTP {response.status_code}", True
                    else:
                        self.pool.succeeded(lease)  # it answered, even if to refuse
                        if response.status_code == 200:
                            return self._json_body(url, response)
                        if response.status_code != 429:
                            raise self._request_error(url, response)
                        last_problem = f"{url}: HTTP 429"
                if server_failed:
                    self.pool.failed(lease, last_problem)
                if attempt + 1 == attempts:
                    break
                if server_failed and self.pool.any_up():
                    # Another server can take it now: waiting would only idle this request's slot.
                    logger.info("request failed (%s); retry %d/%d on another server", last_problem, attempt + 1, attempts - 1)
                    continue
                delay = min(30.0, self.config.retry_backoff_s * 2**backoffs) * (0.5 + random.random() / 2)
                backoffs += 1
                # One updating progress line says it (attempt k of n, next try); the log keeps each retry at info.
                logger.info("request failed (%s); retry %d/%d in %.1f s", last_problem, attempt + 1, attempts - 1, delay)
                self.retry_progress.failed(attempt + 1, delay, first=not shown)
                shown = True
                await asyncio.sleep(delay)
            raise EngineUnavailableError(f"server unreachable after {attempts} attempts: {last_problem}")
        finally:
            if shown:  # this request was on the retry line
                self.retry_progress.finished()

    @staticmethod
    def _json_body(url: str, response: Any) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise EngineUnavailableError(f"{url} did not answer with a JSON object; is --base-url the server's /v1 endpoint?")
        return body

    def server_stats(self) -> list[ServerStats]:
        """Requests sent to each server and how many failed, since the engine was made (benchmarks and tests read it)."""
        return self.pool.stats()

    def _request_error(self, url: str, response: Any) -> Exception:
        message = " ".join(error_message(response).split())[:300]
        if response.status_code == 400 and any(marker in message.lower() for marker in _CONTEXT_MARKERS):
            return PromptTooLongError(f"prompt does not fit the model's context: {message}")
        if response.status_code == 404:
            if "model" in message.lower():
                return ModelNotFoundError(f"{url}: model {self.model!r} not found: {message}")
            return EngineUnavailableError(f"{url}: HTTP 404 (does --base-url end in /v1?): {message}")
        if response.status_code in (401, 403):
            return EngineUnavailableError(f"{url}: HTTP {response.status_code} (is ${self.config.api_key_env} set?): {message}")
        return EngineUnavailableError(f"{url}: HTTP {response.status_code}: {message}")

    def _to_result(self, body: dict[str, Any], request: GenerationRequest, latency: float) -> GenerationResult:
        choices = sorted(body.get("choices") or [], key=lambda choice: choice.get("index", 0))
        if len(choices) != request.n:
            raise EngineUnavailableError(f"server returned {len(choices)} choices for n={request.n}")
        usage = body.get("usage") or {}
        total = int(usage.get("completion_tokens") or 0)
        counts, estimated = choice_token_counts(choices, total)
        completions = tuple(
            Completion(
                (choice.get("message") or {}).get("content") or "",
                "length" if choice.get("finish_reason") == "length" else "stop",
                count,
                estimated,
            )
            for choice, count in zip(choices, counts)
        )
        return GenerationResult(completions, int(usage.get("prompt_tokens") or 0), total, latency)

    def close(self) -> None:
        pass


class OpenAISession:
    """Calls sharing one engine's client and concurrency bound (``OpenAIEngine.session``)."""

    def __init__(self, engine: OpenAIEngine, client: Any, semaphore: asyncio.Semaphore) -> None:
        self._engine, self._client, self._semaphore = engine, client, semaphore
        self.concurrency = engine.config.max_concurrency

    async def generate(self, requests: Sequence[GenerationRequest],
                       progress: GenerationProgress | None = None) -> list[GenerationResult]:
        """Like ``Engine.generate``; ``progress`` (the engine's own batch call passes one) counts requests as they return."""
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(self._engine._complete(self._client, self._semaphore, request, index, progress))
                    for index, request in enumerate(requests)
                ]
        except BaseExceptionGroup as failures:
            # One failed request cancels the rest; report it as itself, not as a group.
            raise first_error(failures) from None
        return [task.result() for task in tasks]
