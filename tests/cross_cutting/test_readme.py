"""Every code block in README.md and in the documentation pages (docs/) runs, and shows what it really does.

How each fenced block is checked (any other language fails, so no new block escapes):

All blocks run, page by page and python blocks first, in one scratch folder that holds the
repository's ``examples/``, as a reader would from a clone's root: ``examples/...`` paths and
``from examples.mail_tools import ...`` work, and a file one block writes is there for the blocks
below it.

- ``python``: run statement by statement (by the standard library's doctest runner), each block in
  a fresh namespace (imports included: a block is self-contained).
  An expression followed by a comment shows its result: ``value  # repr``, or ``# repr`` lines right
  below it (a blank line ends them), or ``# ValidationError: message`` for an exception. ``...``
  matches anything, and line breaks and spacing need not match. Blocks that import an optional SDK
  skip without it, unless CI requires the SDKs. A block that imports what an extra brings says so
  first, in a ``# pip install 'pydantic-lenient[extra]'`` comment naming that extra.
- ``console``: each ``$ command`` runs in the shell; the lines
  below it, where shown, must be what it prints (stdout and stderr together, ``...`` matching
  anything). A command must exit 0, or the code its ``# exit N`` comment gives.
- ``bash``: install and development commands; ``.ci/run`` must run each of them (as written, or
  with more options).
- ``json`` must parse; ``yaml`` (CI configuration to copy) is shown, not run.
"""

from __future__ import annotations

import ast
import doctest
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sdks import require, require_framework

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PYPROJECT = ROOT / "pyproject.toml"
CI_RUN = ROOT / ".ci" / "run"
LANGUAGES = {"python", "console", "bash", "json", "yaml"}
OPTIONAL_SDKS = ("mcp", "fastmcp", "pydantic_ai", "opentelemetry", "agents", "langchain_core")
# Blocks that import these (docs/frameworks.md) need a framework `[test]` leaves out: the module
# to import, and the variable that makes its absence a failure (tests/sdks.py, `require_framework`).
FRAMEWORKS = {
    "crewai": ("crewai.tools", "PYDANTIC_LENIENT_REQUIRE_CREWAI"),
    "llama_index": ("llama_index.core", "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS"),
    "pydantic_lenient.adapters.llama_index": ("llama_index.core", "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS"),
    "google.adk": ("google.adk", "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS"),
    "pydantic_lenient.adapters.google_adk": ("google.adk", "PYDANTIC_LENIENT_REQUIRE_FRAMEWORKS"),
}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
UNCHECKED = "<no result shown>\n"
EXCEPTION = re.compile(r"^[A-Z][A-Za-z0-9_]*(?:Error|Exception|Conflict):")
EXIT_CODE = re.compile(r"#.*\bexits? (?P<code>[0-9]+)\b")
FENCE = re.compile(r"^(?P<indent> *)```(?P<language>[^`\s]*)")


# What a block must name in its `# pip install` comment when it imports a module: one of these
# extras of pydantic-lenient, or a distribution of that name.
INSTALLS = {
    "mcp": {"mcp", "proxy"},
    "fastmcp": {"fastmcp"},
    "opentelemetry": {"otel"},
    "opentelemetry.sdk": {"otel", "opentelemetry-sdk"},
    "pydantic_ai": {"pydantic-ai-slim", "frameworks"},
    "agents": {"openai-agents", "frameworks"},
    "langchain_core": {"langchain-core", "frameworks"},
    "crewai": {"crewai"},  # the extra, and the distribution
    "llama_index": {"llama-index-core", "frameworks"},
    "google.adk": {"google-adk", "frameworks"},
    "pydantic_lenient.adapters.pydantic_ai": {"pydantic-ai-slim", "frameworks"},
    "pydantic_lenient.adapters.openai_agents": {"openai-agents", "frameworks"},
    "pydantic_lenient.adapters.langchain": {"langchain-core", "frameworks"},
    "pydantic_lenient.adapters.llama_index": {"llama-index-core", "frameworks"},
    "pydantic_lenient.adapters.google_adk": {"google-adk", "frameworks"},
    "pydantic_lenient.repair": {"repair", "mcp", "fastmcp", "proxy"},
    "pydantic_lenient.testing": {"testing"},
    "pydantic_lenient.codemod": {"codemod"},
    "pydantic_lenient.adapters.mcp": {"mcp"},
    "pydantic_lenient.adapters.fastmcp": {"fastmcp"},
    "pydantic_lenient.adapters.clients": {"mcp", "fastmcp"},
    "pydantic_lenient.observe.otel": {"otel"},
}
PIP_INSTALL = re.compile(r"^#.*?\bpip install (?P<words>.*)$", re.MULTILINE)
EXTRAS = re.compile(r"^pydantic-lenient\[(?P<extras>[a-z0-9,-]+)\]$")


@dataclass(frozen=True)
class Block:
    language: str
    line: int  # the document's line of the block's first code line
    text: str
    document: str = "README.md"  # the path from the repository's root

    @property
    def id(self) -> str:
        return f"{self.document}-{self.language}-line-{self.line}"

    @property
    def where(self) -> str:
        return f"{self.document} line {self.line}"


def readme_blocks(text: str, document: str = "README.md") -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        indent, body, start = len(opening["indent"]), [], index + 1
        while index < len(lines) and not lines[index].strip().startswith("```"):
            body.append(lines[index][indent:])
            index += 1
        index += 1
        blocks.append(Block(opening["language"], start, "\n".join(body) + "\n", document))
    return blocks


DOCUMENTS = [README, *sorted(DOCS.rglob("*.md"))]
BLOCKS = [
    block
    for path in DOCUMENTS
    for block in readme_blocks(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
]


def _blocks(language: str) -> list[Block]:
    return [block for block in BLOCKS if block.language == language]


@pytest.fixture(scope="module")
def readme_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder like a clone's root for all the blocks: the examples are there."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return folder


@pytest.fixture
def scratch(readme_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(readme_folder)
    monkeypatch.syspath_prepend(str(readme_folder))
    return readme_folder


def test_every_block_has_a_known_language() -> None:
    assert {block.document for block in BLOCKS} >= {"README.md", "docs/lenient.md"}, "blocks not found"
    unknown = [block.id for block in BLOCKS if block.language not in LANGUAGES]
    assert not unknown, f"blocks need one of {sorted(LANGUAGES)} as their language: {unknown}"


# Python blocks ------------------------------------------------------------------------------------


class _Checker(doctest.OutputChecker):
    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return want == UNCHECKED or super().check_output(want, got, optionflags)


def _comments(source: str) -> dict[int, str]:
    """Line number -> comment text (without ``#`` and one space), for every comment in source."""
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string[1:].removeprefix(" ")
    return comments


def _shown_result(statement: ast.stmt, lines: list[str], comments: dict[int, str], next_start: int) -> str | None:
    """The comment lines that show an expression's result: trailing, then whole-line ones below."""
    end = statement.end_lineno or statement.lineno
    shown = [comments[end]] if end in comments else []
    line = end + 1
    while line < next_start and lines[line - 1].strip().startswith("#"):
        shown.append(comments[line])
        line += 1
    return "\n".join(shown) + "\n" if shown else None


def doctest_of(block: Block) -> doctest.DocTest:
    """The block as doctest examples, one per top-level statement, with their shown results."""
    lines = block.text.splitlines()
    module = ast.parse(block.text, filename=f"{block.document}, line {block.line}")
    comments = _comments(block.text)
    starts = [min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) for node in module.body]
    examples = []
    for number, statement in enumerate(module.body):
        next_start = starts[number + 1] if number + 1 < len(starts) else len(lines) + 1
        source = "\n".join(lines[starts[number] - 1 : statement.end_lineno]) + "\n"
        shown = _shown_result(statement, lines, comments, next_start) if isinstance(statement, ast.Expr) else None
        want, exc_msg = UNCHECKED, None
        if shown is not None and EXCEPTION.match(shown):
            want, exc_msg = "", "..." + shown
        elif shown is not None:
            want = shown
        examples.append(doctest.Example(source, want, exc_msg, lineno=starts[number] - 1))
    return doctest.DocTest(examples, {"__name__": "readme"}, block.id, block.document, block.line - 1, None)


def _imported_modules(block: Block) -> set[str]:
    """Every module a block imports, with its full dotted name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(block.text)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _named_installs(block: Block) -> set[str]:
    """The extras and distributions a block's ``# pip install`` comments name."""
    named: set[str] = set()
    for match in PIP_INSTALL.finditer(block.text):
        for word in match["words"].replace("'", " ").replace('"', " ").split():
            extras = EXTRAS.match(word)
            named.update(extras["extras"].split(",") if extras else {word})
    return named


def missing_installs(block: Block) -> list[str]:
    """The modules a block imports whose install its comments do not name."""
    named = _named_installs(block)
    missing = []
    for module in sorted(_imported_modules(block)):
        needs = [INSTALLS[prefix] for prefix in INSTALLS if module == prefix or module.startswith(f"{prefix}.")]
        missing += [module for installs in needs if not installs & named]
    return missing


def _pyproject_extras() -> set[str]:
    text = PYPROJECT.read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([a-z0-9-]+) = \[", section, flags=re.MULTILINE))


@pytest.mark.parametrize("block", _blocks("python"), ids=lambda block: block.id)
@pytest.mark.usefixtures("scratch")
def test_python_block(block: Block) -> None:
    missing = missing_installs(block)
    assert not missing, f"{block.where}: the block imports {missing}; say what to install in a `# pip install` comment"
    for sdk in sorted({module.split(".")[0] for module in _imported_modules(block)} & set(OPTIONAL_SDKS)):
        require(sdk)
    if any(module.startswith("pydantic_lenient.gateway") for module in _imported_modules(block)):
        require("uvicorn")  # the `gateway` extra
    for module in sorted(_imported_modules(block)):
        for prefix, (framework, required_by) in FRAMEWORKS.items():
            if module == prefix or module.startswith(f"{prefix}."):
                require_framework(framework, required_by=required_by)
    report = io.StringIO()
    runner = doctest.DocTestRunner(checker=_Checker(), optionflags=FLAGS)
    results = runner.run(doctest_of(block), out=report.write)
    assert results.attempted, f"{block.where}: the block has no statement"
    if results.failed:
        pytest.fail(f"{block.where}:\n{report.getvalue()}", pytrace=False)


# Console blocks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    line: str
    shown: list[str]

    @property
    def exit_code(self) -> int:
        match = EXIT_CODE.search(self.line)
        return int(match["code"]) if match else 0


def console_commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:], []))
        else:
            assert commands, f"{block.where}: a console block starts with `$ command`"
            commands[-1].shown.append(line)
    return commands


@pytest.mark.parametrize("block", _blocks("console"), ids=lambda block: block.id)
def test_console_block(block: Block, scratch: Path) -> None:
    if any("pydantic-lenient serve" in command.line for command in console_commands(block)):
        require("uvicorn")  # the `gateway` extra
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in console_commands(block):
        completed = subprocess.run(
            command.line,
            shell=True,
            cwd=scratch,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
            check=False,
        )
        where = f"{block.where}: `{command.line}`"
        assert completed.returncode == command.exit_code, f"{where} exited {completed.returncode}:\n{completed.stdout}"
        if command.shown:
            want = "\n".join(command.shown) + "\n"
            assert doctest.OutputChecker().check_output(want, completed.stdout, doctest.ELLIPSIS), (
                f"{where} printed:\n{completed.stdout}\nwhere the document shows:\n{want}"
            )


# Other blocks -------------------------------------------------------------------------------------


def _commands_in(script: str) -> list[list[str]]:
    """Each simple command of a script (split at ``&&``, comments dropped) as its words."""
    lines = (re.sub(r"(^|\s)#.*$", "", line) for line in script.splitlines())
    return [command.split() for line in lines for command in line.split("&&") if command.strip()]


@pytest.mark.parametrize("block", _blocks("bash"), ids=lambda block: block.id)
def test_ci_runs_every_bash_command(block: Block) -> None:
    ci_commands = _commands_in(CI_RUN.read_text(encoding="utf-8"))
    missing = [
        " ".join(words)
        for words in _commands_in(block.text)
        if not any(ci_words[: len(words)] == words for ci_words in ci_commands)
    ]
    assert not missing, f"{block.where}: .ci/run does not run {missing}"


def _json_error(text: str) -> str | None:
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    return None


def test_json_blocks_parse() -> None:
    errors = {block.where: _json_error(block.text) for block in _blocks("json")}
    assert not {where: error for where, error in errors.items() if error}, "json blocks that do not parse"


# The harness itself can fail ------------------------------------------------------------------------

BROKEN = """```python
len([1, 2])  # 3
```

```python
int("x")
# ValueError: invalid literal for int() with base 10: 'y'
```

```python
undefined_name
```

```console
$ python3 -c "print(1)"
2
```

```console
$ python3 -c "import sys; sys.exit(1)"
```
"""


@pytest.mark.parametrize("block", readme_blocks(BROKEN), ids=lambda block: block.id)
@pytest.mark.usefixtures("scratch")
def test_a_wrong_block_fails(block: Block) -> None:
    with pytest.raises((pytest.fail.Exception, AssertionError)):
        test_python_block(block) if block.language == "python" else test_console_block(block, Path.cwd())


GOOD = """```python
from pydantic import BaseModel

class Point(BaseModel):
    x: int

    y: int = 0


Point(x="1")  # Point(x=1, y=0)
Point(x=[])
# ValidationError: 1 validation error for Point
# x
#   Input should be a valid integer [type=int_type, input_value=[], input_type=list]
#     ...
print({"a": 1,
       "b": 2})
# {'a': 1,
#  'b': 2}

list(range(3))
# [0, 1, 2]
sorted({3, 1})  # [1, ...]
```

```console
$ python3 -c "print(1); import sys; sys.exit(3)"   # exits 3
1
$ python3 -c "print(1); print(2)"
...
2
```
"""


@pytest.mark.parametrize("block", readme_blocks(GOOD), ids=lambda block: block.id)
@pytest.mark.usefixtures("scratch")
def test_a_right_block_passes(block: Block) -> None:
    test_python_block(block) if block.language == "python" else test_console_block(block, Path.cwd())


def test_a_block_must_name_its_install() -> None:
    unnamed, named, core = readme_blocks(
        "```python\nfrom pydantic_lenient.repair import repair_arguments\n```\n\n"
        "```python\n# pip install 'pydantic-lenient[otel]' opentelemetry-sdk\n"
        "from opentelemetry.sdk.metrics import MeterProvider\nimport pydantic_lenient.observe.otel\n```\n\n"
        "```python\nfrom pydantic_lenient.observe import OutcomeRecorder\n```\n"
    )
    assert missing_installs(unnamed) == ["pydantic_lenient.repair"]
    assert missing_installs(named) == []
    assert missing_installs(core) == []
    assert missing_installs(Block("python", 1, "# pip install 'pydantic-lenient[otel]'\nimport mcp\n")) == ["mcp"]


def test_every_install_named_is_an_extra() -> None:
    extras = _pyproject_extras()
    assert {"all", "testing", "repair", "mcp", "fastmcp", "proxy", "codemod", "otel", "test", "docs", "dev"} <= extras
    named = {extra for installs in INSTALLS.values() for extra in installs if "-" not in extra}
    assert named <= extras, f"INSTALLS names extras pyproject.toml does not have: {sorted(named - extras)}"
    for block in BLOCKS:
        for match in PIP_INSTALL.finditer(block.text):
            for word in match["words"].replace("'", " ").split():
                if found := EXTRAS.match(word):
                    unknown = set(found["extras"].split(",")) - extras
                    assert not unknown, f"{block.where}: no such extra {sorted(unknown)}"


def test_every_install_hint_in_the_package_is_right_for_a_wheel_and_a_clone() -> None:
    extras = _pyproject_extras()
    hints = 0
    for path in sorted((ROOT / "src").rglob("*.py")):
        text = " ".join(path.read_text(encoding="utf-8").split()).replace('" "', "")
        for wheel, clone in re.findall(
            r"pip install 'pydantic-lenient\[([a-z,-]+)\]'.{0,30}?-e '\.\[([a-z,-]+)\]'", text
        ):
            hints += 1
            assert wheel == clone, f"{path.name}: the wheel and clone hints name different extras"
            assert set(wheel.split(",")) <= extras, f"{path.name}: no such extra {wheel}"
        bare = len(re.findall(r"pip install", text)) - 2 * len(re.findall(r"pip install 'pydantic-lenient\[", text))
        assert bare == 0, f"{path.name}: an install hint without both forms ('pydantic-lenient[x]' and -e '.[x]')"
    assert hints >= 5
