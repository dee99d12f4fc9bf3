"""The lenient types: scalars that also take their string forms, JSON values that also take their
JSON text, and the mapping behind `Lenient[T]` that makes a plain annotation lenient.

Their public names are exported by the package root (`from pydantic_lenient import LenientInt`).
Nothing is imported here, so that a program using one type loads only that type's module.
"""
