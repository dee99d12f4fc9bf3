"""The rules and annotation changes that recorded failures support, and the rules file they make.

    suggestions = suggest(load_outcomes("logs/"))   # or suggest(recorder.snapshot())
    rules_document(suggestions)                      # {"rules": [...]}, for Normalizer.from_file

``pydantic-lenient suggest LOG_DIR`` and the dashboard show the same suggestions.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .stats_file import AliasEvidence, OutcomeStats

__all__ = ("Suggestion", "client_lines", "rules_document", "suggest")

_BOOL_ERRORS = frozenset({"bool_type", "bool_parsing"})
_INT_ERRORS = frozenset({"int_type", "int_parsing", "int_from_float"})
_FLOAT_ERRORS = frozenset({"float_type", "float_parsing"})
_STRUCTURE_ERRORS = frozenset(
    {
        "list_type",
        "tuple_type",
        "set_type",
        "frozen_set_type",
        "dict_type",
        "model_type",
        "model_attributes_type",
        "dataclass_type",
    }
)
# (shape, error types that refused it) -> what a type_coerce or json_accept_both rule converts to.
_COERCIONS: dict[tuple[str, frozenset[str]], tuple[str, str]] = {
    ("boolean text", _BOOL_ERRORS): ("type_coerce", "bool"),
    ("digit string", _INT_ERRORS): ("type_coerce", "int"),
    ("number string", _FLOAT_ERRORS): ("type_coerce", "float"),
    ("JSON text of an array", _STRUCTURE_ERRORS): ("json_accept_both", "json"),
    ("JSON text of an object", _STRUCTURE_ERRORS): ("json_accept_both", "json"),
}
# Shapes of a value the lenient form of an annotation would take.
_LENIENT_TAKES = frozenset(
    {"digit string", "number string", "boolean text", "JSON text of an array", "JSON text of an object"}
)


@dataclass(frozen=True)
class Suggestion:
    """A normalizer rule (``kind="rule"``, with ``rule`` in the rules-file format) or an annotation
    change for the tool's author (``kind="annotation"``), with the number of refusals behind it."""

    kind: Literal["rule", "annotation"]
    tool: str
    param: str
    evidence: int
    reason: str
    rule: dict[str, Any] | None = None
    annotation: str | None = None
    replacement: str | None = None
    clients: tuple[tuple[str, int], ...] = ()
    """The refusals behind it by the client that sent them (its ``clientInfo.name``), most first;
    calls from clients that never named themselves are not in it."""

    def __str__(self) -> str:
        if self.rule is not None:
            change = f"rule {json.dumps(self.rule, ensure_ascii=False)}"
        else:
            change = f"{self.tool}.{self.param}: {self.annotation} -> {self.replacement}"
        by_client = "; by client: " + ", ".join(f"{name} {count}" for name, count in self.clients)
        return f"{change}  ({self.reason}{by_client if self.clients else ''})"


def _by_client(*breakdowns: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """Counts by client added up, most first (then by name)."""
    total: dict[str, int] = {}
    for breakdown in breakdowns:
        for name, count in breakdown.items():
            total[name] = total.get(name, 0) + count
    return tuple(sorted(total.items(), key=lambda item: (-item[1], item[0])))


def suggest(stats: OutcomeStats, *, min_count: int = 3) -> list[Suggestion]:
    """Rules and annotation changes that the recorded failures support ``min_count`` times or more.

    * an unknown name sent in calls that lacked a required one, or near a declared one the calls did
      not send (another case or case convention, ``old_str`` for ``old_text``; see
      `pydantic_lenient.observe.failures.near`), refused or
      not → ``param_alias`` (for each unknown name, the name it came with most often; ties go to
      the more similar name);
    * boolean text refused for a boolean → ``type_coerce`` to ``bool`` (digit strings for an
      integer → ``int``, number strings for a float → ``float``);
    * JSON text refused for an array or object → ``json_accept_both`` converting to ``json``;
    * a parameter the strictness audit flags, refused for a value its lenient form takes → that form.
    """
    if min_count < 1:
        raise ValueError("min_count must be at least 1")
    suggestions: list[Suggestion] = []
    used_ids: set[str] = set()

    def rule_id(*parts: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts))[:120] or "rule"
        candidate, number = base, 2
        while candidate in used_ids:
            candidate, number = f"{base}-{number}", number + 1
        used_ids.add(candidate)
        return candidate

    best: dict[tuple[str, str], AliasEvidence] = {}
    for alias in stats.aliases:
        if alias.count < min_count or alias.unknown == alias.missing:
            continue
        current = best.get((alias.tool, alias.unknown))
        if current is None or _alias_rank(alias) > _alias_rank(current):
            best[(alias.tool, alias.unknown)] = alias
    for alias in sorted(best.values(), key=lambda alias: (-alias.count, alias.tool, alias.unknown)):
        rule = {
            "id": rule_id(alias.tool, alias.unknown),
            "tools": [alias.tool],
            "type": "param_alias",
            "from": alias.unknown,
            "to": alias.missing,
        }
        reason = f"{alias.count} calls sent `{alias.unknown}` and lacked `{alias.missing}`"
        by_client = _by_client(alias.clients)
        suggestions.append(
            Suggestion("rule", alias.tool, alias.unknown, alias.count, reason, rule=rule, clients=by_client)
        )

    coercions: dict[tuple[str, str, str, str], int] = {}
    shapes: dict[tuple[str, str, str, str], set[str]] = {}
    refused_lenient: dict[tuple[str, str], int] = {}
    clients: dict[Any, list[dict[str, int]]] = {}  # each suggestion's patterns' counts by client
    for pattern in stats.patterns:
        if pattern.shape in _LENIENT_TAKES:
            where = (pattern.tool, pattern.param)
            refused_lenient[where] = refused_lenient.get(where, 0) + pattern.count
            clients.setdefault(where, []).append(pattern.clients)
        if "." in pattern.param or "[" in pattern.param:
            continue  # rules of these types name top-level parameters
        for (shape, error_types), (rule_type, target) in _COERCIONS.items():
            if pattern.shape == shape and pattern.error_type in error_types:
                key = (pattern.tool, pattern.param, rule_type, target)
                coercions[key] = coercions.get(key, 0) + pattern.count
                shapes.setdefault(key, set()).add(shape)
                clients.setdefault(key, []).append(pattern.clients)
    for key, count in sorted(coercions.items(), key=lambda item: (-item[1], item[0])):
        tool, param, rule_type, target = key
        if count < min_count:
            continue
        rule = {
            "id": rule_id(tool, param, target),
            "tools": [tool],
            "type": rule_type,
            "from": param,
            "coerce_to": target,
        }
        reason = f"{count} calls refused {' or '.join(sorted(shapes[key]))} in `{param}`"
        suggestions.append(Suggestion("rule", tool, param, count, reason, rule=rule, clients=_by_client(*clients[key])))

    for annotation in stats.annotations:
        count = refused_lenient.get((annotation.tool, annotation.param), 0)
        if count >= min_count:
            reason = f"{count} calls refused for a value {annotation.suggestion} takes"
            suggestions.append(
                Suggestion(
                    "annotation",
                    annotation.tool,
                    annotation.param,
                    count,
                    reason,
                    annotation=annotation.annotation,
                    replacement=annotation.suggestion,
                    clients=_by_client(*clients[(annotation.tool, annotation.param)]),
                )
            )
    return suggestions


def client_lines(stats: OutcomeStats) -> list[str]:
    """One line per client that named itself: its calls, how many were refused or failed, and how
    many the normalizer or repair changed, most calls first.

    >>> from pydantic_lenient.observe.stats_file import ClientCalls
    >>> client_lines(OutcomeStats(clients=[ClientCalls(client="cursor-vscode", host="cursor", ok=3, refused=1)]))
    ['cursor-vscode (host cursor): 4 calls, 1 refused, 0 failed, 0 changed by rules or repair']
    """
    lines = []
    for calls in sorted(stats.clients, key=lambda calls: (-(calls.ok + calls.refused + calls.error), calls.client)):
        version = f" {calls.version}" if calls.version else ""
        total = calls.ok + calls.refused + calls.error
        lines.append(
            f"{calls.client}{version} (host {calls.host}): {total} calls, {calls.refused} refused, "
            f"{calls.error} failed, {calls.changed} changed by rules or repair"
        )
    return lines


def _alias_rank(alias: AliasEvidence) -> tuple[int, float]:
    return alias.count, difflib.SequenceMatcher(None, alias.unknown, alias.missing).ratio()


def rules_document(suggestions: Iterable[Suggestion]) -> dict[str, list[dict[str, Any]]]:
    """The rule suggestions as a rules file (``{"rules": [...]}``), which `Normalizer.from_file` loads."""
    return {"rules": [suggestion.rule for suggestion in suggestions if suggestion.rule is not None]}
