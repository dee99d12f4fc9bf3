"""Google ADK: `LenientFunctionTool`, ADK's ``FunctionTool`` for a function the model may call with
wrong-typed arguments (requires ``google-adk``).

ADK builds a tool's declaration from the signature, so a `lenient_tool` advertises its lenient
schema there. But ADK calls the function with the model's raw arguments (its argument validation is
off by default), after turning a dict into the parameter's model with pydantic's lax rules; and when
its validation is on, it validates with lax pydantic against the annotations as written, so it
refuses ``"null"`` and JSON text the declaration admits and takes ``" 100"`` and ``"yes"``. This
tool validates every call with the lenient annotations instead, whatever ADK's setting, and
reports the errors to the model as ADK reports its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.tools.function_tool import FunctionTool
from pydantic import ValidationError

from pydantic_lenient.types.tools import lenient_arguments, lenient_tool

__all__ = ("LenientFunctionTool",)


class LenientFunctionTool(FunctionTool):
    """ADK's ``FunctionTool`` for ``func`` made a `lenient_tool`, validating with its lenient annotations.

    >>> from pydantic_lenient.adapters.google_adk import LenientFunctionTool
    >>> def account_balance(account: str, include_pending: bool) -> str:
    ...     "The balance of an account."
    ...     return f"{account}: {'with' if include_pending else 'without'} pending"
    >>> tool = LenientFunctionTool(account_balance)
    >>> tool._preprocess_args_with_validation({"account": "main", "include_pending": "false"})
    ({'account': 'main', 'include_pending': False}, [])
    >>> tool._preprocess_args_with_validation({"account": "main", "include_pending": "yes"})[1]
    ["include_pending: Input should be a boolean, or the string 'true' or 'false' in any letter case"]
    """

    def __init__(self, func: Callable[..., Any], **options: Any) -> None:
        super().__init__(lenient_tool(func), **options)

    def _preprocess_args(self, args: dict[str, Any]) -> dict[str, Any]:
        # ADK's own step makes models from dicts with lax pydantic; the lenient check does it instead.
        return dict(args)

    def _preprocess_args_with_validation(self, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        try:
            return lenient_arguments(self.func, args), []
        except ValidationError as error:
            return dict(args), [
                f"{'.'.join(str(part) for part in detail['loc'])}: {detail['msg']}" for detail in error.errors()
            ]
