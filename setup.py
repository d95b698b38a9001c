"""The build's one step beyond pyproject.toml: game.py and MCTS.py, the rules and the
search (self-play's hot loop), are compiled to C extensions by mypyc from the same typed
source (see compiled.py and docs/performance.md).  Each extension sits beside its source
and is imported in its place; run `make .venv/.installed` again after editing either."""

from mypyc.build import mypycify
from setuptools import setup

setup(ext_modules=mypycify(["game.py", "MCTS.py"], opt_level="3", separate=True))
