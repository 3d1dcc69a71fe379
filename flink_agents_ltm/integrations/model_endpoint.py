"""Where a model lives and how to reach it: one JSON POST per call, stdlib only.

Each call opens its own connection (``urllib``), so one client object is safe to
share between worker threads. Every failure becomes a
:class:`~flink_agents_ltm.api.chat_models.ModelProviderError` naming the
provider, the URL and the HTTP status; the API key never appears in messages.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.chat_models import ModelProviderError

_BODY_EXCERPT = 500


@dataclass(frozen=True)
class ModelEndpoint:
    """``api_key_env`` names the environment variable holding the key (read at each
    call, never stored); ``None`` sends no key (local servers)."""

    provider: str
    base_url: str
    model: str
    timeout_s: float = 60.0
    api_key_env: str | None = None

    def __post_init__(self):
        if not isinstance(self.base_url, str) or not self.base_url.startswith(
                ("http://", "https://")):
            raise ValueError(f"{self.provider}: base_url must start with http:// or https://, "
                             f"got {self.base_url!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"{self.provider}: model must be a non-empty string, "
                             f"got {self.model!r}")
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, int | float) \
                or self.timeout_s <= 0:
            raise ValueError(f"{self.provider}: timeout_s must be a positive number of "
                             f"seconds, got {self.timeout_s!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.api_key_env is not None:
            self.api_key()  # fail when the resource is built, not at the first call

    def api_key(self) -> str:
        value = os.environ.get(self.api_key_env, "").strip()
        if not value:
            raise ValueError(f"{self.provider}: the API key variable {self.api_key_env} is unset "
                             "or empty; set it, or pass api_key_env=None for a server without "
                             "keys")
        return value

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON object answered."""
        url = self.base_url + path
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env is not None:
            headers["Authorization"] = f"Bearer {self.api_key()}"
        request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read()[:_BODY_EXCERPT].decode(errors="replace")
            raise self.error(f"HTTP {error.code} {error.reason}: {detail}", url,
                             error.code) from None
        except TimeoutError as error:
            raise self.error(f"no answer within {self.timeout_s:g} s (timeout_s)", url) from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise self.error(f"no answer within {self.timeout_s:g} s (timeout_s)",
                                 url) from error
            raise self.error(f"cannot connect: {error.reason}", url) from error
        except OSError as error:
            raise self.error(f"connection failed: {type(error).__name__}: {error}", url) from error
        try:
            answer = json.loads(raw)
        except ValueError:
            raise self.error(f"answered something that is not JSON: "
                             f"{raw[:_BODY_EXCERPT].decode(errors='replace')!r}", url,
                             200) from None
        if not isinstance(answer, dict):
            raise self.error(f"answered JSON that is not an object: {answer!r:.{_BODY_EXCERPT}}",
                             url, 200)
        return answer

    def error(self, what: str, url: str, status: int | None = None) -> ModelProviderError:
        return ModelProviderError(f"{self.provider} model '{self.model}' at {url}: {what}",
                                  provider=self.provider, url=url, status=status)
