"""The README and docs/ as a user's guide: every command the README names exists (each
`make` target in the Makefile, each `python -m` module and `python path.py` script in
the repository), every local link of the README and of docs/ resolves (file and
heading), and the README stays short and current (no dates, no lab-journal words)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
README_MAX_LINES = 320
EXTERNAL_MODULES = {"pytest", "pip", "venv"}
"""Modules a `python -m` may name that are installed tools, not files of this repository."""

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
JOURNAL_WORDS = re.compile(r"sitting|tonight|this session", re.IGNORECASE)


def codeOf(markdown: str) -> list[str]:
    """The code in a markdown text: each fenced block and each inline code span."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
    blocks = fenced.findall(markdown)
    rest = fenced.sub("", markdown)
    return blocks + re.findall(r"`([^`\n]+)`", rest)


def makeTargets(markdown: str) -> set[str]:
    """The targets of every `make` command in the text's code (variables such as
    ITERATIONS=3 before or after the target are not targets)."""
    command = re.compile(r"(?:^|[\s;&|(])make\s+(?:[A-Za-z_]\w*=\S*\s+)*([A-Za-z0-9_.][\w./-]*)", re.MULTILINE)
    return {target for code in codeOf(markdown) for target in command.findall(code)
            if "=" not in target}


def pythonModules(markdown: str) -> set[str]:
    """The modules of every `python -m MODULE` in the text's code."""
    return {module for code in codeOf(markdown) for module in re.findall(r"python\S*\s+-m\s+([A-Za-z_][\w.]*)", code)}


def pythonScripts(markdown: str) -> set[str]:
    """The scripts of every `python path/to/script.py` in the text's code."""
    return {script for code in codeOf(markdown)
            for script in re.findall(r"python\S*\s+((?:[\w.-]+/)*[\w-]+\.py)\b", code)}


def makefileTargets(makefile: str) -> set[str]:
    """The targets a Makefile defines, with its simple variables ($(VENV)) expanded."""
    variables = dict(re.findall(r"^([A-Za-z_]\w*)\s*(?::=|\?=|=)\s*(.*?)\s*$", makefile, re.MULTILINE))

    def expand(text: str) -> str:
        return re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), text)

    targets = set()
    for line in makefile.splitlines():
        if line.startswith("\t") or line.lstrip().startswith("#"):
            continue
        rule = re.match(r"^([^\s:=#][^:=]*?)\s*::?(?!=)", line)
        if rule:
            targets.update(expand(rule.group(1)).split())
    return targets


def moduleFile(module: str) -> Path | None:
    """The file of `module` in the repository (a module or a package), or None."""
    path = ROOT.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def localLinks(markdown: str) -> list[str]:
    """The targets of the text's markdown links and images that are not web addresses."""
    return [link for link in re.findall(r"\]\(([^)\s]+)\)", markdown)
            if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def anchorOf(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchorsOf(markdown: str) -> set[str]:
    fenced = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
    return {anchorOf(heading) for heading in re.findall(r"^#{1,6}\s+(.*)$", fenced.sub("", markdown), re.MULTILINE)}


def brokenLinks(document: Path) -> list[str]:
    """The local links of `document` whose file, or heading, does not exist."""
    broken = []
    for link in localLinks(document.read_text()):
        path, _, anchor = link.partition("#")
        target = (document.parent / path).resolve() if path else document
        if not target.exists():
            broken.append(f"{link}: no file {target}")
        elif anchor and target.suffix == ".md" and anchor not in anchorsOf(target.read_text()):
            broken.append(f"{link}: no heading #{anchor} in {target.name}")
    return broken


# -- the parsers, on texts whose answers are known ------------------------------------

def test_the_parsers_find_commands_in_code_only():
    text = ("Run `make train ITERATIONS=3` or `make .venv/.installed`; make retraining cheaper.\n"
            "```\nmake test                # the suite\n.venv/bin/python -m play --second\n"
            "CONNECT4_X=1 .venv/bin/python benchmarks/curve.py --plot x.png\n```\n")
    assert makeTargets(text) == {"train", ".venv/.installed", "test"}
    assert pythonModules(text) == {"play"}
    assert pythonScripts(text) == {"benchmarks/curve.py"}


def test_the_makefile_parser_expands_variables_and_skips_assignments_and_recipes():
    makefile = "VENV := .venv\nPY ?= python\n.PHONY: a\n$(VENV)/.installed: setup.py\n\ttouch $@\na b: c\n\tx: y\n"
    assert makefileTargets(makefile) == {".PHONY", ".venv/.installed", "a", "b"}


def test_a_missing_module_script_or_link_is_caught(tmp_path):
    assert moduleFile("funcs") == ROOT / "funcs.py"
    assert moduleFile("no_such_module") is None
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# A heading\n")
    page.write_text("[ok](other.md#a-heading) [web](https://example.com) [gone](nowhere.md) "
                    "[bad anchor](other.md#no-heading) ![img](missing.png)\n# Here\n[self](#here)")
    assert [link.split(":")[0] for link in brokenLinks(page)] == ["nowhere.md", "other.md#no-heading",
                                                                  "missing.png"]


# -- the README and docs/ ------------------------------------------------------------

def test_every_make_target_the_readme_names_is_in_the_makefile():
    named = makeTargets(README.read_text())
    assert {"train", "test", "bench", "pons", "perfect", "play"} <= named
    missing = named - makefileTargets((ROOT / "Makefile").read_text())
    assert not missing, f"README names make targets the Makefile lacks: {sorted(missing)}"


def test_every_python_module_and_script_the_readme_names_exists():
    text = README.read_text()
    modules = pythonModules(text)
    assert {"funcs", "play"} <= modules
    missing = sorted(m for m in modules - EXTERNAL_MODULES if moduleFile(m) is None)
    assert not missing, f"README names `python -m` modules the repository lacks: {missing}"
    scripts = pythonScripts(text)
    assert scripts, "the README names no script run with python"
    missing = sorted(s for s in scripts if not (ROOT / s).is_file())
    assert not missing, f"README names scripts the repository lacks: {missing}"


def test_every_local_link_of_the_readme_and_docs_resolves():
    for document in [README, *DOCS]:
        assert brokenLinks(document) == [], document.name


def test_the_readme_links_the_design_strength_and_performance_records():
    links = {link.partition("#")[0] for link in localLinks(README.read_text())}
    assert {"docs/design.md", "docs/strength.md", "docs/performance.md"} <= links
    assert {"design.md", "strength.md", "performance.md"} <= {doc.name for doc in DOCS}


def test_the_readme_is_short():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES} wanted"


def test_the_readme_and_docs_are_current_records_not_a_journal():
    for document in [README, *DOCS]:
        text = document.read_text()
        assert DATE.findall(text) == [], f"{document.name} holds dates"
        assert JOURNAL_WORDS.findall(text) == [], f"{document.name} reads like a journal"
