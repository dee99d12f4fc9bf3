"""A griffe extension for the API reference: a docstring's doctest examples render as code blocks.

The docstrings write examples as plain doctest (``>>>`` lines, then the result), which Markdown would
run together into a paragraph; this fences each run of them as ``pycon``. mkdocs.yml loads it.
"""

from __future__ import annotations

from typing import Any

import griffe

__all__ = ("DoctestBlocks", "fence_doctests")


def fence_doctests(text: str) -> str:
    r"""Each run of lines from a ``>>>`` line to the next blank line, fenced as a ``pycon`` block.

    >>> fence_doctests("Text.\n>>> 1 + 1\n2\n\nMore.").splitlines()
    ['Text.', '```pycon', '>>> 1 + 1', '2', '```', '', 'More.']
    """
    fenced: list[str] = []
    in_example = False
    for line in text.splitlines():
        if not in_example and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            fenced.append(f"{indent}```pycon")
            in_example = True
        elif in_example and not line.strip():
            fenced.append(f"{indent}```")
            in_example = False
        fenced.append(line)
    if in_example:
        fenced.append(f"{indent}```")
    return "\n".join(fenced)


class DoctestBlocks(griffe.Extension):
    """Fences the doctest examples of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
