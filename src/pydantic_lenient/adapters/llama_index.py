"""LlamaIndex: `lenient_function_tool`, a ``FunctionTool`` whose schema is lenient and whose function
gets converted values (requires ``llama-index-core``).

LlamaIndex builds a tool's schema from the signature but keeps only the type inside ``Annotated``
(and a description), so a `lenient_tool` alone still advertises ``integer``; its description is the
signature written out, which would show the lenient annotations. LlamaIndex then calls the function
with the model's raw arguments. This tool advertises the lenient form of LlamaIndex's own schema
(descriptions kept), keeps the description LlamaIndex writes for the function as it is, and calls
the `lenient_tool`, which converts every argument or refuses the call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from llama_index.core.tools import FunctionTool

from pydantic_lenient.types.mapping import lenient_model
from pydantic_lenient.types.tools import lenient_tool

__all__ = ("lenient_function_tool",)


def lenient_function_tool(function: Callable[..., Any], **options: Any) -> FunctionTool:
    """``FunctionTool.from_defaults`` for ``function`` (sync or async), made lenient; ``options`` as there.

    >>> from pydantic_lenient.adapters.llama_index import lenient_function_tool
    >>> def account_balance(account: str, include_pending: bool) -> str:
    ...     "The balance of an account."
    ...     return f"{account}: {include_pending!r}"
    >>> tool = lenient_function_tool(account_balance)
    >>> tool.metadata.get_parameters_dict()["properties"]["include_pending"]["anyOf"][0]
    {'type': 'boolean'}
    >>> tool.call(account="main", include_pending="false").content
    'main: False'
    """
    is_async = inspect.iscoroutinefunction(function)
    plain = (
        FunctionTool.from_defaults(async_fn=function, **options)
        if is_async
        else FunctionTool.from_defaults(function, **options)
    )
    metadata = plain.metadata
    schema = lenient_model(metadata.fn_schema) if metadata.fn_schema is not None else None
    settings = {**options, "name": metadata.name, "description": metadata.description, "fn_schema": schema}
    lenient = lenient_tool(function)
    return (
        FunctionTool.from_defaults(async_fn=lenient, **settings)
        if is_async
        else FunctionTool.from_defaults(lenient, **settings)
    )
