"""The mail tools on FastMCP, over stdio: ``python examples/fastmcp_server.py``.

`LenientMiddleware` advertises the lenient schemas in a style (``--style portable|type-array|any-of|strict``)
and normalizes arguments with examples/mail_rules.json first. ``strict_input_validation=True``
keeps plain parameters strict; the lenient ones stay lenient, because their annotation decides.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fastmcp import FastMCP

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mail_tools import TOOLS  # noqa: E402

from pydantic_lenient import STYLES, Normalizer, Style  # noqa: E402
from pydantic_lenient.adapters.fastmcp import LenientMiddleware  # noqa: E402


def build_server(style: Style = "portable", *, strict_input_validation: bool = True) -> FastMCP:
    normalizer = Normalizer.from_file(HERE / "mail_rules.json")
    server = FastMCP(
        "mail",
        middleware=[LenientMiddleware(normalizer, style=style)],
        strict_input_validation=strict_input_validation,
    )
    for tool in TOOLS:
        server.tool(tool)
    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The mail tools over stdio, on FastMCP.")
    parser.add_argument("--style", choices=STYLES, default="portable")
    build_server(parser.parse_args().style).run("stdio", show_banner=False)
