"""The ``whist`` command line: ``whist train CONFIG``, ``whist eval ...``, ``whist sb3-train ...``.

Each subcommand lives in its own module exposing ``configure_parser(parser)`` and
``run(args) -> int``; this file only wires them together (imports are lazy so that
``whist --help`` is fast).
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "train": ("training.train", "train an agent by self-play PPO from a YAML config, then evaluate it"),
    "eval": ("training.evaluate", "play duplicate-deal matches between agents and report win rates with 95% CIs"),
    "sb3-train": ("training.sb3_maskable", "train one seat with sb3-contrib MaskablePPO against fixed opponents"),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level argument parser with one subparser per subcommand."""
    parser = argparse.ArgumentParser(prog="whist", description="whist-env: train and evaluate agents for Whist-family games.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        mod = importlib.import_module(module)
        mod.configure_parser(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``whist`` console script; returns the process exit status."""
    args = build_parser().parse_args(argv)
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
