"""The build's one step beyond pyproject.toml: MCTS.py, the search's hot loop, is compiled
to a C extension by mypyc (from the same typed source; see README, Performance).  The
extension sits beside MCTS.py and is imported in its place; MCTS.py refuses to load a
compiled copy older than itself (run `make .venv/.installed` again after editing it)."""

from mypyc.build import mypycify
from setuptools import setup

setup(ext_modules=mypycify(["MCTS.py"], opt_level="3"))
