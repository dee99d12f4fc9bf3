"""Where a target reported a loss: the helper the target and provider tests share."""

from __future__ import annotations

from typing import Any

from pydantic_lenient.schema.targets import TargetSchema


def locations(schema: dict[str, Any], field: str) -> set[str]:
    """The property's location, and those of the definitions it refers to, at any depth."""
    found = {f"/properties/{field}"}
    pending: list[Any] = [schema["properties"][field]]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/"):
                location = reference[1:]
                if location not in found:
                    found.add(location)
                    section, name = location.strip("/").split("/", 1)
                    pending.append(schema[section][name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


def explained(result: TargetSchema, field: str) -> bool:
    """The target reported a loss at this field, or in a definition it uses."""
    places = locations(result.schema, field)
    return any(loss.location.startswith(place) for loss in result.losses for place in places)
