"""GitHub Copilot CLI: the arguments pass unchanged; on a Gemini model the Gemini API's rules apply.

Sources:

* github/copilot-cli#4623: a tool whose ``items`` has a type array fails every Gemini request with
  400, while GPT and Claude models are unaffected; github/copilot-cli#4835: an integer ``enum`` on
  an array does the same. The rules are `pydantic_lenient.hosts.gemini.gemini_api_refusals`.
* No report shows the CLI checking or converting arguments: they are sent as the model wrote them.
* ``clientInfo.name``: ``github-copilot-developer`` (a maintainer's answer in github/copilot-cli#432);
  later versions send ``copilot-cli``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .gemini import gemini_api_refusals
from .profile import HostProfile

__all__ = ("COPILOT_CLI", "COPILOT_CLI_ON_GEMINI", "CopilotCli")


@dataclass(frozen=True)
class CopilotCli(HostProfile):
    on_gemini: bool = False

    def refusals(self, schema: dict[str, Any]) -> list[str]:
        return gemini_api_refusals(schema) if self.on_gemini else []


_SOURCES = ("github/copilot-cli#4623", "github/copilot-cli#4835", "github/copilot-cli#432")
COPILOT_CLI = CopilotCli(
    name="copilot-cli",
    title="GitHub Copilot CLI",
    client_names=("github-copilot-developer", "copilot-cli"),
    sources=_SOURCES,
)
COPILOT_CLI_ON_GEMINI = CopilotCli(
    name="copilot-cli+gemini",
    title="GitHub Copilot CLI on a Gemini model",
    client_names=(),
    sources=_SOURCES,
    on_gemini=True,
    takes_down_every_tool=True,
)
