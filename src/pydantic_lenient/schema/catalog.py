"""Tool catalogs: the MCP ``tools/list`` result for a set of tools, in any schema style.

A tool can be given as a ``(name, model)`` pair, an object with ``name``, ``description`` and
``input_model``, a plain function (its parameters become the input model, as MCP SDKs do), a model
class, a list or dict of those, or an MCP server object from the official ``mcp`` SDK or FastMCP.

A server's catalog is what the server itself lists (its ``tools/list`` schemas, after any
middleware, as a client receives them), unchanged: the catalog, the audit and an in-process
``list_tools()`` are one document, defects included. A style cannot change what a server sends, so
a server's catalog is never restyled; another target rewrites it for its consumer.
"""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from pydantic_lenient.types.annotations import function_hints

from ._rewriting import room_to_recurse
from .styles import Style, is_in_style
from .targets import Target, input_schema, to_target

__all__ = ("ToolSpec", "model_from_function", "tool_catalog", "tool_specs")

_T = TypeVar("_T")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the name and description it is listed with, and the model its input validates with.

    >>> from pydantic_lenient import LenientUInt, tool_specs
    >>> def search(folder: str, limit: LenientUInt = 10) -> list[str]:
    ...     "Search a mail folder."
    ...     return []
    >>> spec = tool_specs([search])[0]
    >>> spec.name, spec.description, spec.input_model.model_validate({"folder": "Dev", "limit": "5"}).limit
    ('search', 'Search a mail folder.', 5)
    """

    name: str
    description: str | None
    input_model: type[BaseModel]
    advertised: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """For a server's tool: the input schema the server lists, which its catalog is built from."""


def tool_catalog(tools: Any, *, style: Style | None = None, target: Target = "mcp") -> dict[str, Any]:
    """The MCP ``tools/list`` result: ``{"tools": [{"name", "description", "inputSchema"}, ...]}``.

    Tools keep the order they were given in, so a catalog can be committed and diffed. Every
    ``inputSchema`` has ``"type": "object"`` at its root, and its ``$ref``s resolve within it.
    With another ``target`` (`pydantic_lenient.schema.targets`) each ``inputSchema`` is that target's shape.

    A server's tools are listed as the server lists them (what a client receives), never restyled,
    so that the catalog shows what its hosts check: ``style`` (`default_style_for` the target when not given) is
    the style the catalog writes functions and models in, and for a server only a check that it
    lists its tools in that style (`ValueError` if not: set the style on its adapter). Another
    ``target`` rewrites a server's listing as it rewrites any schema (`to_target`).

    >>> from pydantic_lenient import StrictBoolish, tool_catalog
    >>> def delete_file(path: str, dry_run: StrictBoolish = True) -> None:
    ...     "Delete one file."
    >>> tool_catalog([delete_file])
    {'tools': [{'name': 'delete_file', 'description': 'Delete one file.',
     'inputSchema': {'properties': {'path': {'title': 'Path', 'type': 'string'},
     'dry_run': {'anyOf': [{'type': 'boolean'}, {'pattern': '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$',
     'type': 'string'}], 'default': True, 'title': 'Dry Run'}}, 'required': ['path'],
     'title': 'delete_fileArguments', 'type': 'object'}}]}
    >>> tool_catalog([42])
    Traceback (most recent call last):
      ...
    TypeError: ...
    """
    listed = []
    for spec in tool_specs(tools):
        entry: dict[str, Any] = {"name": spec.name}
        if spec.description:
            entry["description"] = spec.description
        if spec.advertised is None:
            entry["inputSchema"] = input_schema(spec.input_model, style=style, target=target)
        else:
            entry["inputSchema"] = _as_listed(spec.name, spec.advertised, style, target)
        listed.append(entry)
    return {"tools": listed}


def _as_listed(name: str, advertised: Mapping[str, Any], style: Style | None, target: Target) -> dict[str, Any]:
    """A server's tool's ``inputSchema`` as the server lists it, rewritten for ``target`` if that is
    not ``"mcp"``. Raises `ValueError` when ``style`` is given and the server lists it otherwise."""
    listed = copy.deepcopy(dict(advertised))
    with room_to_recurse():  # as deep as the server's own schema generator went
        in_style = style is None or is_in_style(listed, style)
    if not in_style:
        raise ValueError(
            f"the server lists {name!r} in another style than {style!r}, and a catalog of a server is what"
            f" it lists: give the style to its adapter (make_lenient(server, style={style!r}) or"
            f" LenientMiddleware(style={style!r})), or leave the style out"
        )
    return listed if target == "mcp" else to_target(listed, target).schema


def tool_specs(tools: Any) -> list[ToolSpec]:
    """Everything tool-like in ``tools``, as `ToolSpec`s. Raises `TypeError` for anything else,
    and `ValueError` when two tools share a name.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import tool_specs
    >>> class Fetch(BaseModel):
    ...     uid: int
    >>> [spec.name for spec in tool_specs({"fetch": Fetch, "fetch_again": Fetch})]
    ['fetch', 'fetch_again']
    >>> tool_specs([("fetch", Fetch), ("fetch", Fetch)])
    Traceback (most recent call last):
      ...
    ValueError: two tools are named 'fetch'
    """
    specs = list(_specs(tools))
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ValueError(f"two tools are named {spec.name!r}")
        seen.add(spec.name)
    return specs


def model_from_function(function: Callable[..., Any], *, keep: Iterable[str] | None = None) -> type[BaseModel]:
    """The input model MCP SDKs build from a function's signature.

    Parameters keep their annotations (with ``Annotated`` metadata) and defaults; ``*args``,
    ``**kwargs``, ``self``/``cls`` and parameters annotated with an SDK ``Context`` are left out,
    as are any not in ``keep`` when it is given. A parameter named like a `BaseModel` method
    (``copy``) becomes a field ``field_copy`` whose alias is the parameter's name, as the SDKs do.
    """
    signature = inspect.signature(function)
    hints = function_hints(function)
    wanted = None if keep is None else set(keep)
    fields: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD) or name in ("self", "cls"):
            continue
        annotation = hints.get(name, Any)
        if (wanted is not None and name not in wanted) or _is_sdk_context(annotation):
            continue
        default = ... if parameter.default is parameter.empty else parameter.default
        if callable(getattr(BaseModel, name, None)):
            # A field named like a BaseModel method (``copy``, ``json``) would shadow it, which pydantic
            # warns about; the SDKs rename the field and keep the parameter's name as its alias.
            fields[f"field_{name}"] = (Annotated[annotation, Field(alias=name)], default)
        else:
            fields[name] = (annotation, default)
    name = getattr(function, "__name__", "tool")
    model: type[BaseModel] = create_model(
        f"{name}Arguments", __config__=ConfigDict(arbitrary_types_allowed=True), **fields
    )
    return model


def _specs(tools: Any) -> Iterable[ToolSpec]:
    if _is_model(tools):
        yield ToolSpec(tools.__name__, inspect.getdoc(tools) if tools.__doc__ else None, tools)
    elif isinstance(tools, tuple) and len(tools) == 2 and isinstance(tools[0], str):
        yield _spec_from(tools[0], tools[1])
    elif isinstance(tools, Mapping):
        for name, tool in tools.items():
            yield _spec_from(str(name), tool)
    elif is_official_sdk_server(tools):
        yield from _official_sdk_specs(tools)
    elif is_fastmcp_server(tools):
        yield from _fastmcp_specs(tools)
    elif is_tool_object(tools):
        yield ToolSpec(tools.name, tools.description, tools.input_model)
    elif inspect.isfunction(tools) or inspect.ismethod(tools):
        yield _spec_from(tools.__name__, tools)
    elif isinstance(tools, Iterable) and not isinstance(tools, (str, bytes)):
        for tool in tools:
            yield from _specs(tool)
    else:
        raise TypeError(f"not a tool, a list of tools or an MCP server: {tools!r}")


def _spec_from(name: str, tool: Any) -> ToolSpec:
    if _is_model(tool):
        return ToolSpec(name, inspect.getdoc(tool) if tool.__doc__ else None, tool)
    if callable(tool) and not isinstance(tool, type):
        return ToolSpec(name, inspect.getdoc(tool), model_from_function(tool))
    if is_tool_object(tool):
        return ToolSpec(name, tool.description, tool.input_model)
    raise TypeError(f"tool {name!r} is neither a model, a function nor a tool object: {tool!r}")


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def is_tool_object(value: Any) -> bool:
    return all(hasattr(value, attribute) for attribute in ("name", "description")) and _is_model(
        getattr(value, "input_model", None)
    )


def _is_sdk_context(annotation: Any) -> bool:
    """A parameter the SDKs inject (their ``Context``), which is not part of the tool's input."""
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation
    if not isinstance(base, type):
        return False
    return any(cls.__name__ == "Context" and cls.__module__.split(".")[0] in ("mcp", "fastmcp") for cls in base.__mro__)


# The official SDK's MCPServer keeps a tool manager whose tools carry the exact argument model
# the server validates with.
def is_official_sdk_server(value: Any) -> bool:
    """The official SDK's server: its own ``list_tools`` (what a client receives) and the tool
    manager behind it (the argument models)."""
    manager = getattr(value, "_tool_manager", None)
    return (
        manager is not None
        and callable(getattr(manager, "list_tools", None))
        and callable(getattr(value, "list_tools", None))
    )


def _official_sdk_specs(server: Any) -> Iterable[ToolSpec]:
    listed = {tool.name: tool for tool in run_sync(server.list_tools())}  # what a client receives
    for tool in server._tool_manager.list_tools():
        if tool.name in listed:
            advertised = listed[tool.name].input_schema
            yield ToolSpec(tool.name, tool.description, tool.fn_metadata.arg_model, advertised)


# FastMCP validates a function tool's arguments against the function itself; the parameters it
# advertises are the ones left once it has removed those it injects. Its middleware runs on the
# listing as on a client's (a lenient one may replace a tool's function), before the functions are read.
def is_fastmcp_server(value: Any) -> bool:
    return hasattr(value, "local_provider") and inspect.iscoroutinefunction(getattr(value, "list_tools", None))


def _fastmcp_specs(server: Any) -> Iterable[ToolSpec]:
    for tool in run_sync(server.list_tools()):
        function = getattr(tool, "fn", None)
        if function is None:
            raise TypeError(f"FastMCP tool {tool.name!r} has no Python function to read its parameters from")
        parameters = tool.parameters.get("properties", {})
        yield ToolSpec(tool.name, tool.description, model_from_function(function, keep=parameters), tool.parameters)


def run_sync(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to completion, from synchronous code or from inside a running event loop."""
    # Imported here: only server objects need an event loop, and asyncio costs every import of the package.
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
