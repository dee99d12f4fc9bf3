"""The lenient type family, declared once: what every marker says about itself, and which marker
makes each plain Python type lenient.

Code asks a marker what it is (as annotated-types' ``BaseMetadata`` lets code ask a constraint)
instead of listing marker classes: the mapping, the null-text and constraint helpers, the rendering,
the audit, the codemod and the normalizer all read the class attributes below. A scalar marker
(`LenientScalar`) registers itself for its ``python_type`` when its class is made, so a new lenient
scalar is one module, named once in `_MEMBER_MODULES`.

No pydantic import here: the base holds the hooks, each member module implements them.
"""

from __future__ import annotations

import functools
import importlib
import typing
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar

__all__ = (
    "LenientMarker",
    "LenientScalar",
    "alias_names",
    "named_aliases",
    "scalar_marker_class",
    "scalar_marker_class_of_subclass",
)

# The modules that declare a lenient scalar (each registers its marker class when imported). A new
# lenient scalar type is one module, named here.
_MEMBER_MODULES = ("integers", "floats", "booleans", "decimals")

_REGISTRY: dict[type, type[LenientScalar]] = {}


class LenientMarker:
    """Base of the library's markers: what a marker says about the annotation it is in."""

    __slots__ = ()

    makes_lenient: ClassVar[bool] = False
    """The leaf it annotates also takes its wrong-typed forms (an audit finds nothing to widen there)."""

    strings_as_text: ClassVar[bool | None] = None
    """Whether a union member carrying it may take a string argument as the string itself (JSON text
    kept as text: True; a number's digits: False); None when the member's base type says."""

    keeps_meaning: ClassVar[bool] = False
    """It only adds forms of the same value (what the mapping adds): the codemod may fold a default's
    constraints into the annotation beside it, as it could not beside a validator."""


class LenientScalar(LenientMarker):
    """A marker for one scalar type: a JSON type, a Python type, and a string form.

    A subclass sets the class attributes and, where it holds bounds, ``tightened``; it registers
    itself for ``python_type`` (`scalar_marker_class`). Its public alias (``LenientInt``) is the
    ``Annotated[python_type, Marker()]`` its module exports under ``alias_name``.
    """

    __slots__ = ()

    makes_lenient = True
    strings_as_text = False
    keeps_meaning = True

    python_type: ClassVar[type]
    """The plain type the marker makes lenient, and the type of the value it produces."""
    json_type: ClassVar[str]
    """The canonical JSON Schema type: ``"integer"``, ``"number"`` or ``"boolean"``."""
    alias_name: ClassVar[str]
    """The public name of the marker with no bounds (``"LenientInt"``)."""
    error_type: ClassVar[str]
    """The one error type a value of none of its forms gets (``"lenient_int"``)."""
    string_pattern: ClassVar[str]
    """The pattern of its string form with no bounds, one of `forms.SCALAR_STRING_FORMS` (which the
    style stage reads without loading the markers)."""
    coerce_to: ClassVar[str | None]
    """The normalizer's ``type_coerce`` target for a plain field of ``python_type`` (None: no rule)."""
    bound_names: ClassVar[tuple[str, ...]] = ()
    """The keywords the marker holds (``ge``, ``le``...), as its dataclass fields."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        python_type = cls.__dict__.get("python_type")
        if isinstance(python_type, type):
            _REGISTRY[python_type] = cls

    def tightened(self, bounds: Iterable[tuple[str, Any]]) -> tuple[LenientScalar, bool]:
        """This marker with ``bounds`` (``("ge", 1)``...) added, and whether it holds them all. The base
        holds none: a marker without bounds returns itself, whole only when there are none."""
        return self, not list(bounds)

    def held_bounds(self) -> dict[str, Any]:
        """The bounds this marker holds, by keyword (for writing it back as source)."""
        return {name: getattr(self, name) for name in self.bound_names if getattr(self, name) is not None}

    @classmethod
    def suggested_name(cls, metadata: tuple[Any, ...]) -> str:
        """The public type to suggest for a plain ``python_type`` with ``metadata`` (the audit's words)."""
        return cls.alias_name

    @classmethod
    def kept_reason(cls, metadata: tuple[Any, ...]) -> str | None:
        """Why the mapping must leave a plain ``python_type`` with ``metadata`` strict (None: it need not)."""
        return None

    @classmethod
    def exact_form(cls, bounds: Any) -> Any:
        """The core schema of a plain ``python_type`` kept beside ``str`` (`ExactNumber`): only its own
        JSON type, then ``bounds`` (what was written before, or None)."""
        raise TypeError(f"ExactNumber() is not defined for {cls.python_type.__name__}")


@functools.cache
def _registry() -> dict[type, type[LenientScalar]]:
    """The registry, once every member module has registered (importing one member alone leaves
    the others out until then)."""
    for name in _MEMBER_MODULES:
        importlib.import_module(f"{__package__}.{name}")
    return _REGISTRY


def scalar_marker_class(base: Any) -> type[LenientScalar] | None:
    """The lenient marker class for exactly the plain type ``base`` (``int``, ``float``, ``bool``,
    ``Decimal``), or None (a subclass, an enum, anything else)."""
    return _registry().get(base) if isinstance(base, type) else None


def scalar_marker_class_of_subclass(base: Any) -> type[LenientScalar] | None:
    """The marker class for the nearest registered class in ``base``'s MRO (``bool`` before ``int``)."""
    if not isinstance(base, type):
        return None
    registry = _registry()
    return next((registry[kind] for kind in base.__mro__ if kind in registry), None)


@functools.cache
def named_aliases() -> Mapping[LenientScalar, tuple[str, Any]]:
    """Every public scalar alias by its marker: ``_LenientInt(ge=0)`` is ``("LenientUInt", LenientUInt)``."""
    found: dict[LenientScalar, tuple[str, Any]] = {}
    for module_name in _MEMBER_MODULES:
        module = importlib.import_module(f"{__package__}.{module_name}")
        for name in module.__all__:
            alias = getattr(module, name)
            if typing.get_origin(alias) is not Annotated:
                continue
            markers = [marker for marker in typing.get_args(alias)[1:] if isinstance(marker, LenientScalar)]
            if len(markers) == 1:
                found.setdefault(markers[0], (name, alias))
    return found


def alias_names() -> dict[Any, str]:
    """Every public scalar alias's name by its marker."""
    return {marker: name for marker, (name, _) in named_aliases().items()}
