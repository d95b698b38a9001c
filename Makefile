# Two commands for a fresh machine (each sets up .venv/ by itself):
#   make train ITERATIONS=3   train from the notebook, headless, default config
#                             (PRESET=strong: the strong preset; PRESET=shipped trains the shipped run on)
#   make test                 run the test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
ITERATIONS ?= 3
PRESET ?= default
MINUTES ?= 10

.PHONY: train test bench bench-workers pons perfect movetime curve ablation play notebook export tensorboard ship-run

SHIPPED_RUN := run_archive/connect4/run0006

$(VENV)/.installed: pyproject.toml setup.py game.py MCTS.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

train: $(VENV)/.installed
	CONNECT4_ITERATIONS=$(ITERATIONS) CONNECT4_PRESET=$(PRESET) $(PY) run_notebook.py run.ipynb

test: $(VENV)/.installed
	$(PY) -m pytest

# The iteration benchmark's baseline: the commit whose strong-preset iteration the speed work is measured against.
BASELINE ?= 3851c5d

bench: $(VENV)/.installed
	$(PY) benchmarks/selfplay.py
	$(PY) benchmarks/iteration.py --baseline $(BASELINE)

bench-workers: $(VENV)/.installed
	$(PY) benchmarks/workers.py

pons: $(VENV)/.installed
	$(PY) benchmarks/pons.py

perfect: $(VENV)/.installed
	$(PY) benchmarks/perfect.py

movetime: $(VENV)/.installed
	$(PY) benchmarks/movetime.py

curve: $(VENV)/.installed
	$(PY) benchmarks/curve.py

ablation: $(VENV)/.installed
	$(PY) benchmarks/ablation.py --minutes $(MINUTES)

play: $(VENV)/.installed
	$(PY) -m play

notebook: $(VENV)/.installed
	$(VENV)/bin/jupyter notebook run.ipynb

export: $(VENV)/.installed
	$(PY) -m export

# A run's TensorBoard view (RUN, default the shipped run) rebuilt from its metrics.jsonl, then TensorBoard on it.
tensorboard: $(VENV)/.installed
	$(PY) -m scalars $(RUN) && $(VENV)/bin/tensorboard --logdir $(RUN)/tensorboard

# Stage a committed run's resumable state, its whole-game records and the versions they measure
# (shipping.shippedFiles) in place of what git held of it; then `git commit`. RUN: the run folder
# (default the shipped run; a branch trained for several sittings, e.g. RUN=run_archive/connect4/run0003).
# Refused while the run trains (its lock is held) or when a file cannot be read: nothing is staged then.
RUN ?= $(SHIPPED_RUN)
ship-run: $(VENV)/.installed
	@files="$$($(PY) -m shipping $(RUN))" && \
	  git rm -r -q --cached --ignore-unmatch $(RUN) && git add -f $$files && git status --short $(RUN)
