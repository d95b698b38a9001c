"""Run run.ipynb headlessly, streaming what its cells print to this terminal.

    python run_notebook.py run.ipynb [--output run/run.executed.ipynb]

The notebook reads its parameters from the environment: CONNECT4_ITERATIONS (training
iterations; the README's `make train ITERATIONS=N` sets it), CONNECT4_PRESET (the named
configuration, `make train PRESET=strong`) and CONNECT4_CONFIG (a JSON object of config
values overriding the embedded defaults, e.g. for a tiny test run).
The executed notebook, with every output, is saved to --output (default
run/run.executed.ipynb, in the default configuration's run folder), with the kernel's
own output beside it (.kernel.log).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError


class StreamingClient(NotebookClient):
    """A notebook client that also echoes every stream output as it arrives."""

    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] == "stream":
            target = sys.stderr if msg["content"].get("name") == "stderr" else sys.stdout
            target.write(msg["content"]["text"])
            target.flush()
        return super().process_message(msg, cell, cell_index)


def runNotebook(path: Path, output: Path, timeout: int | None = None) -> None:
    """Execute the notebook at `path` and save it, with its outputs, to `output`.  What
    the kernel process writes below Python (TensorFlow's start-up chatter, a crash
    report) is not captured into cell outputs but goes to `output` with the suffix
    .kernel.log."""
    notebook = nbformat.read(path, as_version=4)
    client = StreamingClient(notebook, timeout=timeout, kernel_name="python3",
                             resources={"metadata": {"path": str(path.resolve().parent)}},
                             extra_arguments=["--IPKernelApp.capture_fd_output=False"])
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(output.with_suffix(".kernel.log"), "w") as kernel_log:
            client.execute(stderr=kernel_log)
    finally:
        nbformat.write(notebook, output)


def main() -> int:
    parser = argparse.ArgumentParser(description="Execute a notebook headlessly, streaming its output.")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--output", type=Path, default=Path("run/run.executed.ipynb"),
                        help="where the executed notebook is saved (default: run/run.executed.ipynb)")
    args = parser.parse_args()
    try:
        runNotebook(args.notebook, args.output)
    except CellExecutionError as error:
        print(f"\nA notebook cell failed (the executed notebook is in {args.output}):\n{error}", file=sys.stderr)
        return 1
    except DeadKernelError as error:
        print(f"\nThe notebook's kernel died ({error}); its last words are in "
              f"{args.output.with_suffix('.kernel.log')}.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\nInterrupted (the notebook as far as it ran is in {args.output}); training is crash-safe: the "
              "same command resumes the run from its last finished iteration.", file=sys.stderr)
        return 130
    print(f"\nDone; the executed notebook is in {args.output}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
