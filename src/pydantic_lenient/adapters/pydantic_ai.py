"""pydantic-ai: `LenientToolset`, a toolset wrapper that makes every tool of the toolset it wraps
lenient, MCP servers' tools included (requires ``pydantic-ai-slim``).

Each tool advertises its schema widened (`widen_schema`: ``"100"`` beside ``100``, ``"false"``
beside ``false``, JSON text beside an array), and its arguments are repaired against the tool's own
schema (`Repairer`) before pydantic-ai validates them: a function tool then gets converted values,
and an MCP server, lenient or not, gets arguments its own schema accepts. What repair cannot fix is
left as sent, for the tool's own validator to refuse and pydantic-ai to send back to the model.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.toolsets import WrapperToolset
from pydantic_ai.toolsets.abstract import SchemaValidatorProt, ToolsetTool

from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.widen import widen_schema

__all__ = ("LenientToolset",)


@dataclass
class LenientToolset(WrapperToolset[Any]):
    """Wrap any toolset (a ``FunctionToolset``, an MCP server, a combination) so that all its tools
        take the wrong-typed forms models send. The schemas are written in the ``any-of`` style, as
    pydantic writes a `lenient_tool`'s (and as pydantic-ai's ``TestModel`` reads them).

        >>> import asyncio
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from pydantic_ai.toolsets import FunctionToolset
        >>> from pydantic_lenient.adapters.pydantic_ai import LenientToolset
        >>> def account_balance(account: str, include_pending: bool) -> str:
        ...     "The balance of an account."
        ...     return f"{account}: {include_pending!r}"
        >>> agent = Agent(TestModel(), toolsets=[LenientToolset(FunctionToolset([account_balance]))])
        >>> async def run() -> str:
        ...     return (await agent.run("go")).output
        >>> asyncio.run(run())
        '{"account_balance":"a: False"}'

    """

    _repairers: dict[str, Repairer] = field(default_factory=dict, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        return {name: self._lenient(tool) for name, tool in tools.items()}

    def _lenient(self, tool: ToolsetTool[Any]) -> ToolsetTool[Any]:
        schema = tool.tool_def.parameters_json_schema
        definition = replace(tool.tool_def, parameters_json_schema=widen_schema(schema, style="any-of"))
        return replace(
            tool, tool_def=definition, args_validator=_Repairing(tool.args_validator, self._repairer(schema))
        )

    def _repairer(self, schema: dict[str, Any]) -> Repairer:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            if key not in self._repairers:
                self._repairers[key] = Repairer(schema)
            return self._repairers[key]


class _Repairing:
    """A tool's validator, given the arguments repaired against the tool's schema first."""

    def __init__(self, validator: Any, repairer: Repairer) -> None:
        self.validator = validator
        self.repairer = repairer

    def validate_json(self, input: str | bytes | bytearray, **options: Any) -> Any:
        if options.get("allow_partial") not in (None, False, "off"):  # still streaming in: nothing to repair yet
            return self.validator.validate_json(input, **options)
        try:
            arguments = json.loads(input) if input else {}
        except ValueError:  # not JSON: the validator says so in its own words
            return self.validator.validate_json(input, **options)
        return self.validate_python(arguments, **options)

    def validate_python(self, input: Any, **options: Any) -> Any:
        return self.validator.validate_python(self.repairer.repair(input).arguments, **options)


_: type[SchemaValidatorProt] = _Repairing  # pydantic-ai takes it where it takes a validator
