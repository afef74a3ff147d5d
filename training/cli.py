"""The ``whist`` command line: ``whist train CONFIG``, ``whist eval ...``, ``whist sb3-train ...``.

Each subcommand lives in its own module exposing ``configure_parser(parser)`` and
``run(args) -> int``; this file only wires them together (only the chosen subcommand's module
is imported, so ``whist --help`` is fast).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

#: subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "train": ("training.train", "train an agent by self-play PPO from a YAML config, then evaluate it"),
    "eval": ("training.evaluate", "play duplicate-deal matches between agents and report win rates with 95 percent confidence intervals"),
    "sb3-train": ("training.sb3_maskable", "train one seat with sb3-contrib MaskablePPO against fixed opponents"),
    "league": ("training.league", "round robin of duplicate-deal matches between agents, stored, with openskill ratings"),
    "leaderboard": ("training.leaderboard", "recompute ratings and pairwise win rates from the results store"),
    "plot": ("training.plots", "write PNG figures from the results store and tensorboard logs"),
    "replay": ("training.replay_html", "write a self-contained HTML page that steps through a game record"),
    "play": ("training.play", "play a game in the terminal against heuristic or checkpoint opponents"),
}


def parse_rule_option(text: str) -> tuple[str, Any]:
    """Argument type of ``--option KEY=VALUE``: ``(key, value)`` with the value read as YAML
    (``5``, ``true``, ``[S, H, D, C]`` as a tuple; text that is not YAML stays text, an empty
    value is ``None``). Raises ``argparse.ArgumentTypeError`` without ``=`` or without a key."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError:
        parsed = value
    if isinstance(parsed, list):  # option values are immutable (a suit rotation is a tuple)
        parsed = tuple(parsed)
    return key.strip(), parsed


def add_game_arguments(parser: argparse.ArgumentParser, option_help: str = "") -> None:
    """Add ``--game`` (default classic_whist) and the repeatable ``--option KEY=VALUE``."""
    from whist_env import GAMES

    parser.add_argument("--game", default="classic_whist", help=f"game to play: {', '.join(GAMES)} (default: %(default)s)")
    parser.add_argument("--option", action="append", default=[], type=parse_rule_option, metavar="KEY=VALUE",
                        help="rule option of the game (repeatable), value read as YAML, e.g. --option honours=false" + option_help)


def add_match_arguments(parser: argparse.ArgumentParser, deals: int, agents_help: str = "") -> None:
    """Add ``--agents SPEC ...``, ``--deals N`` (default ``deals``) and ``--seed``."""
    from agents import AGENT_SPECS

    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help=f"two or more agent specs ({', '.join(AGENT_SPECS)}){agents_help}")
    parser.add_argument("--deals", type=int, default=deals, help="deals per pair (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the random agents (default: %(default)s)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level argument parser with one subparser per subcommand.

    Only the module of ``command`` (when given) is imported and asked for its options, so that
    one subcommand's imports never slow down or break another; the others are listed with
    their one-line help.
    """
    parser = argparse.ArgumentParser(prog="whist", description="whist-env: train and evaluate agents for Whist-family games.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            mod = importlib.import_module(module)
            mod.configure_parser(p)
            p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``whist`` console script; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command if command in SUBCOMMANDS else None).parse_args(argv)
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
