"""Where a new run starts from.

Leave all three None to start from an untrained network.  To start a new run from an
archived one (``run_archive/connect4/runNNNN/``, see `runs.archiveRun`), set
INITIAL_RUN_NUMBER, and optionally the model version (default: that run's best) and
the memory snapshot (default: empty memory).  The archived run's own config.json is
used for everything the new run builds.

This only applies when the live run folder holds no run: an existing run folder is
always resumed where it stopped.
"""

INITIAL_RUN_NUMBER = None
INITIAL_MODEL_VERSION = None
INITIAL_MEMORY_VERSION = None
