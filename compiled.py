"""The compiled build: setup.py compiles game.py and MCTS.py (the rules and the search,
self-play's hot loop) to C extensions with mypyc at install, from the same typed source.
An extension sits beside its source and is imported in its place (docs/performance.md).

Editing a compiled module's source leaves the old extension in place, which would run the
old code; `refuseStaleCopy` makes such an import fail, saying how to rebuild."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

SOURCES = ("game.py", "MCTS.py")
"""The modules setup.py compiles (its list, which the build cannot import from here)."""


def runsCompiled(module: ModuleType) -> bool:
    """True when `module` was imported from its compiled extension."""
    return not str(module.__file__).endswith(".py")


def copySources(folder: str | os.PathLike) -> None:
    """Copy the compiled modules' sources into `folder`: a process that puts `folder`
    first on its import path runs them as plain Python (to compare both builds)."""
    for source in SOURCES:
        shutil.copy(Path(__file__).resolve().parent / source, Path(folder) / source)


def refuseStaleCopy(moduleFile: str, source: str) -> None:
    """Raise ImportError when the module whose `__file__` is `moduleFile` runs compiled
    and its source file `source` (e.g. "game.py") beside the extension is newer: edited
    since the build.  Compiled code sees only the extension's file name in `__file__`,
    so the folder is the first on the import path that holds it, as for the import."""
    if moduleFile.endswith(".py"):
        return
    for folder in sys.path:
        extension = os.path.join(folder or os.curdir, moduleFile)
        if os.path.exists(extension):
            sourcePath = os.path.join(os.path.dirname(extension), source)
            if os.path.exists(sourcePath) and os.path.getmtime(sourcePath) > os.path.getmtime(extension):
                raise ImportError(f"{extension} was compiled from an older {source}: rebuild it with "
                                  f"`make .venv/.installed` (or `pip install -e .`), or delete it to run "
                                  f"{source} as it is")
            return
