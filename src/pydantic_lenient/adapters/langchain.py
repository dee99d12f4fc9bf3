"""LangChain: `lenient_tools`, one call that makes the tools given to ``create_agent`` or a
``ToolNode`` lenient, the MCP tools of ``langchain.mcp`` included (requires ``langchain-core``).

* A plain function, or a tool LangChain made from one, is rebuilt from its `lenient_tool`: LangChain
  reads the lenient signature (its own parameters, ``ToolRuntime``, the config, injected arguments,
  left as written), validates with it, and the function gets converted values.
* A tool whose schema is JSON Schema (``langchain.mcp``'s MCP tools) advertises it widened
  (`widen_schema`), and its arguments are repaired against its own schema (`Repairer`) before the
  call, so an MCP server that is not lenient gets arguments it accepts.
* Any other tool is returned as it is.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, tool

from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.widen import widen_schema
from pydantic_lenient.types.tools import lenient_tool

__all__ = ("lenient_tools",)

# What LangChain keeps about a tool besides its function and schema.
_SETTINGS = ("return_direct", "response_format", "handle_tool_error", "handle_validation_error", "metadata", "tags")


def lenient_tools(tools: Iterable[BaseTool | Callable[..., Any]]) -> list[BaseTool]:
    """The tools (LangChain tools or plain functions), each taking the wrong-typed forms models send.

    >>> from langchain_core.tools import tool
    >>> from pydantic_lenient.adapters.langchain import lenient_tools
    >>> @tool
    ... def account_balance(account: str, include_pending: bool) -> str:
    ...     "The balance of an account."
    ...     return f"{account}: {include_pending!r}"
    >>> [balance] = lenient_tools([account_balance])
    >>> balance.invoke({"account": "main", "include_pending": "false"})
    'main: False'
    """
    return [_lenient(item) for item in tools]


def _lenient(item: BaseTool | Callable[..., Any]) -> BaseTool:
    if not isinstance(item, BaseTool):
        return tool(lenient_tool(item), parse_docstring=_has_arguments_section(item), error_on_invalid_docstring=False)
    if not isinstance(item, StructuredTool):
        return item
    if isinstance(item.args_schema, dict):
        return _repairing(item, item.args_schema)
    function, coroutine = item.func, item.coroutine
    if not (inspect.isfunction(function) or inspect.isfunction(coroutine)):
        return item
    source = function or coroutine
    assert source is not None
    return StructuredTool.from_function(
        func=lenient_tool(function) if function is not None else None,
        coroutine=lenient_tool(coroutine) if coroutine is not None else None,
        name=item.name,
        description=item.description,
        parse_docstring=_has_arguments_section(source),
        error_on_invalid_docstring=False,
        **{name: getattr(item, name) for name in _SETTINGS},
    )


def _repairing(item: StructuredTool, schema: dict[str, Any]) -> StructuredTool:
    repairer = Repairer(schema)
    update: dict[str, Any] = {"args_schema": widen_schema(schema, style="any-of")}
    if item.func is not None:
        function = item.func

        @functools.wraps(function)
        def repaired(**arguments: Any) -> Any:
            return function(**repairer.repair(arguments).arguments)

        update["func"] = repaired
    if item.coroutine is not None:
        coroutine = item.coroutine

        @functools.wraps(coroutine)
        async def repaired_coroutine(**arguments: Any) -> Any:
            return await coroutine(**repairer.repair(arguments).arguments)

        update["coroutine"] = repaired_coroutine
    copied: StructuredTool = item.model_copy(update=update)
    return copied


def _has_arguments_section(function: Callable[..., Any]) -> bool:
    """Whether LangChain can read the parameters' descriptions from the docstring (Google style)."""
    return "\nArgs:" in "\n" + inspect.cleandoc(function.__doc__ or "")
