"""What the install holds: every module of the project is one pyproject.toml installs."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_top_level_module_is_installed_and_none_is_listed_that_is_not_there():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["py-modules"])
    modules = {path.stem for path in ROOT.glob("*.py")} - {"setup"}  # setup.py builds the install
    assert modules - listed == set(), "modules pyproject.toml does not install"
    assert listed - modules == set(), "modules pyproject.toml lists that do not exist"
