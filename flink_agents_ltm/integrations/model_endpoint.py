"""Where a model lives and what every client of ours shares: timeouts, retries,
and errors that name the provider, model, URL and HTTP status, never a key.

The OpenAI and Anthropic clients run on their SDKs, which retry on their own;
Ollama has no SDK of ours, so :class:`RetryingJsonClient` retries its calls the
same way (HTTP 408/409/429/5xx, timeouts and failed connections; Retry-After
honoured; otherwise 0.5 s doubling to 8 s, with jitter). Both run on httpx2
(the HTTP library the SDKs use), one connection pool per model resource.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from flink_agents_ltm.api.chat_models import ModelProviderError

__all__ = ["ModelEndpoint", "RetryingJsonClient", "retry_delay_s"]

log = logging.getLogger(__name__)

_BODY_EXCERPT = 500
_REDACTED = "***"
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 120.0  # a longer wait is not retried (what the SDKs do)


def _positive(provider: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 \
            or not math.isfinite(value):
        raise ValueError(f"{provider}: {name} must be a positive number of seconds, "
                         f"got {value!r}")


def public_url(url: str) -> str:
    """``url`` as it may be shown: no user or password, no query, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


@dataclass(frozen=True)
class ModelEndpoint:
    """A model's address and call settings, checked when the resource is built.

    ``timeout_s`` bounds each attempt's wait for an answer, ``connect_timeout_s``
    its wait for a connection; ``max_retries`` more attempts follow a retryable
    failure. ``api_key_env`` names the environment variable holding the key, read
    once here (``None`` sends no key: local servers). The key is kept out of
    ``repr`` and scrubbed from every error message.
    """

    provider: str
    base_url: str
    model: str
    timeout_s: float = 60.0
    api_key_env: str | None = None
    connect_timeout_s: float = 10.0
    max_retries: int = 2
    _api_key: str | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(
                ("http://", "https://")):
            raise ValueError(f"{self.provider}: base_url must start with http:// or https://, "
                             f"got {self.base_url!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"{self.provider}: model must be a non-empty string, "
                             f"got {self.model!r}")
        _positive(self.provider, "timeout_s", self.timeout_s)
        _positive(self.provider, "connect_timeout_s", self.connect_timeout_s)
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) \
                or self.max_retries < 0:
            raise ValueError(f"{self.provider}: max_retries must be an int >= 0, "
                             f"got {self.max_retries!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.api_key_env is not None:
            value = os.environ.get(self.api_key_env, "").strip()
            if not value:
                raise ValueError(f"{self.provider}: the API key variable {self.api_key_env} is "
                                 "unset or empty; set it, or pass api_key_env=None for a server "
                                 "without keys")
            object.__setattr__(self, "_api_key", value)

    @property
    def api_key(self) -> str | None:
        """The key read from ``api_key_env`` when the resource was built."""
        return self._api_key

    @property
    def timeout(self) -> httpx2.Timeout:
        return httpx2.Timeout(self.timeout_s, connect=self.connect_timeout_s)

    def error(self, what: str, url: str, status: int | None = None) -> ModelProviderError:
        """The error of a call to ``url``, naming provider, model, URL and status."""
        shown = public_url(url)
        message = f"{self.provider} model '{self.model}' at {shown}: {what}"
        if self._api_key:
            message = message.replace(self._api_key, _REDACTED)
        return ModelProviderError(message, provider=self.provider, url=shown, status=status)

    def status_error(self, response: httpx2.Response) -> ModelProviderError:
        """The error of an HTTP error answer, with an excerpt of its body."""
        detail = response.content[:_BODY_EXCERPT].decode(errors="replace")
        return self.error(f"HTTP {response.status_code} {response.reason_phrase}: {detail}",
                          str(response.request.url), response.status_code)

    def transport_error(self, url: str, error: BaseException | None) -> ModelProviderError:
        """The error of a call that got no answer (``error`` is httpx2's reason)."""
        if isinstance(error, httpx2.ConnectTimeout):
            what = f"no connection within {self.connect_timeout_s:g} s (connect_timeout_s)"
        elif isinstance(error, httpx2.TimeoutException):
            what = f"no answer within {self.timeout_s:g} s (timeout_s)"
        elif isinstance(error, httpx2.ConnectError):
            what = f"cannot connect: {error}"
        else:
            what = f"connection failed: {type(error).__name__}: {error}"
        return self.error(what, url)

    def closed_error(self) -> ModelProviderError:
        return self.error("the model was closed (its resource was released)", self.base_url)

    def json_object(self, response: httpx2.Response) -> dict[str, Any]:
        """The JSON object a successful answer carries."""
        url = str(response.request.url)
        try:
            answer = response.json()
        except ValueError:
            raise self.error(f"answered something that is not JSON: "
                             f"{response.content[:_BODY_EXCERPT].decode(errors='replace')!r}",
                             url, response.status_code) from None
        if not isinstance(answer, dict):
            raise self.error(f"answered JSON that is not an object: {answer!r:.{_BODY_EXCERPT}}",
                             url, response.status_code)
        return answer

    def malformed(self, url: str, error: Exception, answer: Any) -> ModelProviderError:
        return self.error(f"malformed reply ({type(error).__name__}: {error}): "
                          f"{answer!r:.{_BODY_EXCERPT}}", url, 200)


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def retry_after_s(headers: httpx2.Headers) -> float | None:
    """The wait a server asks for (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / unit
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    return None


def retry_delay_s(retry: int, headers: httpx2.Headers | None) -> float:
    """How long to wait before retry number ``retry`` (0 for the first)."""
    asked = retry_after_s(headers) if headers is not None else None
    if asked is not None:
        return asked
    return min(INITIAL_BACKOFF_S * 2.0 ** retry, MAX_BACKOFF_S) * (1 - 0.25 * random.random())


class RetryingJsonClient:
    """JSON POSTs to one endpoint over one pooled httpx2 client, retried like the SDKs
    retry. Thread-safe: worker threads share it (httpx2's pool is). ``transport``
    replaces the network (a proxy, or ``httpx2.MockTransport`` in tests)."""

    def __init__(self, endpoint: ModelEndpoint, transport: httpx2.BaseTransport | None = None,
                 headers: Mapping[str, str] | None = None):
        self.endpoint = endpoint
        self._client = httpx2.Client(timeout=endpoint.timeout, transport=transport,
                                     headers=dict(headers or {}))

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``base_url + path``; the JSON object answered."""
        endpoint = self.endpoint
        url = endpoint.base_url + path
        if self._client.is_closed:
            raise endpoint.closed_error()
        retry = 0
        while True:
            try:
                response = self._client.post(url, json=body)
            except httpx2.TransportError as error:
                if retry >= endpoint.max_retries:
                    raise endpoint.transport_error(url, error) from error
                delay = retry_delay_s(retry, None)
                reason = endpoint.transport_error(url, error)
            else:
                if not response.is_error:
                    return endpoint.json_object(response)
                delay = retry_delay_s(retry, response.headers)
                if retry >= endpoint.max_retries or not _retryable(response.status_code) \
                        or delay > MAX_RETRY_AFTER_S:
                    raise endpoint.status_error(response)
                reason = endpoint.status_error(response)
            retry += 1
            log.info("%s; retry %d of %d in %.2f s", reason, retry, endpoint.max_retries, delay)
            time.sleep(delay)

    def close(self) -> None:
        """Close the pool's connections; later calls fail with a clear error."""
        self._client.close()
