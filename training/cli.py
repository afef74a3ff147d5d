"""The ``whist`` command line: the arguments of every subcommand, and the call into the package
that carries it out.

=================  ==============================================  =====================================
subcommand         what it does                                    carried out by
=================  ==============================================  =====================================
``train``          self-play PPO from a YAML config, then eval     :func:`training.learn.train.run_train`
``sb3-train``      one seat with sb3-contrib MaskablePPO           :func:`training.learn.sb3.run_sb3_train`
``rllib-train``    PPO on Ray's RLlib from a YAML config, eval     :func:`training.learn.rllib.train.run_rllib_train`
``eval``           duplicate-deal matches with 95% intervals       :func:`training.evaluation.match.run_eval`
``league``         stored round robin, openskill ratings           :func:`training.evaluation.league.run_league`
``leaderboard``    ratings recomputed from the results store       :func:`training.evaluation.league.run_leaderboard`
``bid-stats``      bidding statistics from game records            :func:`training.evaluation.bidding.run_bid_stats`
``plot``           PNG figures                                     :func:`training.viewers.plots.run_plot`
``replay``         HTML page stepping through a game record        :func:`training.viewers.replay.run_replay`
``play``           a person plays in the terminal                  :func:`training.viewers.play.run_play`
``serve``          a table in the browser: people and agents       :func:`training.viewers.serve.command.run_serve`
``zoo-export``     a finished run becomes the game's zoo agent     :func:`training.learn.zoo.run_zoo_export`
=================  ==============================================  =====================================

Only the chosen subcommand's arguments are built and only its package is imported, so
``whist --help`` is fast and one subcommand's imports never break another.

Exit status: 0 success; 1 the command ran but found a failure (nothing to show, a record that does
not replay); 2 bad usage or input (every message starts ``whist <command>: error:``); 130
interrupted by Ctrl-C or SIGTERM (one line says what was kept). When the reader of the output goes
away (``whist league ... | head``) the command stops quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from training.errors import CommandError, Interrupted


class WhistArgumentParser(argparse.ArgumentParser):
    """An argument parser whose usage errors read like every other error of the command:
    ``whist <command>: error: <message>`` and a pointer to ``--help`` (exit status 2).

    ``command_parsers`` (set by :func:`build_parser`: subcommand name -> its parser) lets the
    top-level parser report arguments it does not recognise as errors of the subcommand given,
    which is where argparse hands everything after the subcommand's name.
    """

    command_parsers: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:
        """``argparse``'s ``parse_args``; an unrecognised argument exits with status 2 and a
        message from the subcommand's parser (``whist sb3-train: error: unrecognized arguments:
        ...``), not the top-level one."""
        argv = sys.argv[1:] if args is None else list(args)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            after = argv[argv.index(command) + 1:] if command in argv else []
            # the subcommand's error when every unrecognised argument follows its name
            owner = getattr(self, "command_parsers", {}).get(command, self) if all(x in after for x in extras) else self
            owner.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


# ---------------------------------------------------------------------------------- shared arguments
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


def _agent_specs() -> str:
    from agents.registry import AGENT_SPECS

    return ", ".join(AGENT_SPECS)


def _workers_and_ray(parser: argparse.ArgumentParser, unit: str) -> None:
    """Add ``--workers N`` and ``--ray [ADDRESS]`` for a command that plays ``unit`` (e.g. "deals") in parallel."""
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help=f"processes playing {unit} at once (default: %(default)s); the results are the same as with one, "
                             "for search agents (pimc, ismcts) use one per core")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help=f"play the {unit} on Ray workers (needs whist-env[rllib]): a local Ray without ADDRESS, or the "
                             "cluster at ADDRESS ('auto' on a cluster node, 'ray://HEAD:10001'); one actor per CPU, or "
                             "--workers N of them; the results are the same as a serial run's")


def add_match_arguments(parser: argparse.ArgumentParser, deals: int, agents_help: str = "") -> None:
    """Add ``--agents SPEC ...``, ``--deals N`` (default ``deals``), ``--seed``, ``--workers`` and ``--ray``."""
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help=f"two or more agent specs ({_agent_specs()}){agents_help}")
    parser.add_argument("--deals", type=int, default=deals, help="deals per pair (default: %(default)s)")
    from training.evaluation.seed_ranges import DEVELOPMENT, REPORT, TRAINING

    parser.add_argument("--seed", type=int, default=REPORT.start,
                        help="seed of the deals and of the agents' random generators (random, pimc, ismcts: reseeded "
                             f"before every play from it, the deal and the side; default: %(default)s, in {REPORT}, the seed range "
                             f"of published figures; {DEVELOPMENT} is for tuning; training deals are {TRAINING}, which no match "
                             "deal equals: training/evaluation/seed_ranges.py)")
    _workers_and_ray(parser, "deals")


def _default_store() -> str:
    from training.evaluation.store import DEFAULT_PATH

    return str(DEFAULT_PATH)


def _examples(parser: argparse.ArgumentParser, text: str) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = text


# ---------------------------------------------------------------------------------- learn
def configure_train(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist train``."""
    _examples(parser,
              "examples:\n"
              "  whist train configs/classic_default.yaml\n"
              "  whist train configs/classic_default.yaml --resume --total-steps 2000000\n"
              "  tensorboard --logdir runs\n\n"
              "Ctrl-C (or SIGTERM) finishes the current update, saves checkpoints/latest.pt and exits 130;\n"
              "--resume continues from it.")
    parser.add_argument("config", help="experiment YAML file (see configs/classic_default.yaml)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run from RUN_DIR/checkpoints/latest.pt, on the backend it was trained on")
    parser.add_argument("--total-steps", type=int, default=None, metavar="N", help="override train.total_steps (environment steps, all seats)")
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default=None, help="override the config's device")
    parser.add_argument("--backend", choices=["aec", "vector"], default=None,
                        help="override env.backend: aec (raw_env per game) or vector (the batched engine, whist_env.vector); "
                             "with --resume it must be the run's own backend")
    parser.add_argument("--seed", type=int, default=None, help="override the config's seed")
    parser.add_argument("--run-dir", default=None, metavar="DIR", help="override the run folder (default: log_dir/run_name)")
    parser.add_argument("--eval-deals", type=int, default=None, metavar="N",
                        help="deals per opponent in the final evaluation (override eval.final_num_deals; 0 skips it)")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")


def _seat_arg(text: str) -> int | str:
    if text == "random":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a seat number or 'random', got {text!r}") from None


def configure_sb3_train(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist sb3-train``."""
    _examples(parser,
              "The final evaluation is 'whist eval --agents sb3:OUT/model.zip SPEC' for every opponent spec (and\n"
              "'random' against it as a reference), printed as whist eval prints it.\n\n"
              "example: whist sb3-train --game classic_whist --timesteps 50000 --opponents random --out runs/sb3")
    g = parser.add_argument_group("game")
    add_game_arguments(g)
    g.add_argument("--episode", choices=["hand", "game"], default="hand",
                   help="what one training episode is: one deal or a whole game (default: %(default)s)")
    g.add_argument("--learner-seat", type=_seat_arg, default=0,
                   help="the learner's seat 0..N-1, or 'random' for a new seat every episode (default: %(default)s)")
    g.add_argument("--partner", choices=["opponent", "self"], default="opponent",
                   help="partnership games: who plays the learner's partner — an agent from --opponents, or the learner "
                        "itself (both seats of its side are its decisions) (default: %(default)s)")
    g.add_argument("--opponents", nargs="+", default=["random"], metavar="SPEC",
                   help="agent specs for the other seats (random, heuristic, checkpoint:PATH, sb3:PATH): one spec for all of "
                        "them, or one per seat the learner does not control, in seat order (fixed --learner-seat only) (default: random)")
    t = parser.add_argument_group("training")
    t.add_argument("--timesteps", type=int, default=50_000, help="learner decisions to train for (default: %(default)s)")
    t.add_argument("--seed", type=int, default=0, help="seed of the env, the opponents, the network and the evaluation (default: %(default)s)")
    t.add_argument("--out", type=Path, default=Path("runs/sb3"), help="run folder (model.zip, tb/, results.json) (default: %(default)s)")
    t.add_argument("--n-envs", type=int, default=1, help="environments stepped per rollout (DummyVecEnv) (default: %(default)s)")
    t.add_argument("--n-steps", type=int, default=2048, help="steps per env per rollout (default: %(default)s)")
    t.add_argument("--batch-size", type=int, default=256, help="minibatch size (default: %(default)s)")
    t.add_argument("--n-epochs", type=int, default=10, help="optimisation epochs per rollout (default: %(default)s)")
    t.add_argument("--learning-rate", type=float, default=3e-4, help="Adam learning rate (default: %(default)s)")
    t.add_argument("--gamma", type=float, default=1.0, help="discount (episodes are short and end with the hand's reward) (default: %(default)s)")
    t.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda (default: %(default)s)")
    t.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus coefficient (default: %(default)s)")
    t.add_argument("--net-arch", default="256,256", help="hidden layer sizes of the policy and value MLPs, comma-separated (default: %(default)s)")
    t.add_argument("--device", default="cpu",
                   help="torch device: cpu, cuda (an error when torch.cuda.is_available() is False) or auto (default: %(default)s)")
    t.add_argument("--threads", type=int, default=1, help="torch CPU threads (torch.set_num_threads) (default: %(default)s)")
    t.add_argument("--log-every", type=float, default=10.0, help="seconds between progress lines, 0: none (default: %(default)s)")
    t.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress lines (as --log-every 0)")
    e = parser.add_argument_group("evaluation")
    e.add_argument("--eval-deals", type=int, default=500,
                   help="duplicate deals of the final evaluation against each opponent spec, 0 skips it (default: %(default)s)")
    e.add_argument("--eval-seed", type=int, default=None, help="seed of the evaluation deals (default: --seed + 1000)")


def configure_rllib_train(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist rllib-train``."""
    _examples(parser,
              "Needs the optional extra whist-env[rllib] (Ray's RLlib). The config names the game, the opponents\n"
              "(agent specs played inside the env, or self-play), the env runners and PPO's hyperparameters;\n"
              "see configs/rllib_classic.yaml and docs/rllib.md.\n\n"
              "examples:\n"
              "  whist rllib-train configs/rllib_classic.yaml                   # a local Ray\n"
              "  ray start --head; whist rllib-train configs/rllib_classic.yaml --address auto   # a cluster\n"
              "  whist eval --agents rllib:runs/rllib_classic heuristic random --option honours=false\n\n"
              "Ctrl-C (or SIGTERM) finishes the current iteration, saves checkpoints/latest and exits 130;\n"
              "--resume continues from it.")
    parser.add_argument("config", help="RLlib run YAML file (see configs/rllib_classic.yaml)")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="a running Ray cluster to train on ('auto' on one of its nodes, or HOST:6379); default: a local Ray "
                             "with the config's ray.num_cpus")
    parser.add_argument("--resume", action="store_true", help="continue the run from RUN_DIR/checkpoints/latest")
    parser.add_argument("--iterations", type=int, default=None, metavar="N", help="override train.iterations (and drop train.total_env_steps)")
    parser.add_argument("--total-env-steps", type=int, default=None, metavar="N",
                        help="override train.total_env_steps (and drop train.iterations; with --iterations: both)")
    parser.add_argument("--seed", type=int, default=None, help="override the config's seed")
    parser.add_argument("--run-dir", default=None, metavar="DIR", help="override the run folder (default: log_dir/run_name)")
    parser.add_argument("--eval-deals", type=int, default=None, metavar="N",
                        help="deals per opponent in the final evaluation (override eval.num_deals; 0 skips it)")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                        help="no progress lines or bars")


# ---------------------------------------------------------------------------------- evaluation
def configure_eval(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist eval``."""
    _examples(parser,
              "Every pair of the listed agents plays the same deals; with duplicate deals (default) each\n"
              "deal is replayed with the sides swapped so that card luck cancels. Reported from the first\n"
              "agent's view: win rate (ties count half) and points per hand (A minus B) with 95% intervals,\n"
              "and the p-value of a t-test over deals.\n\n"
              "example: whist eval --game classic_whist --agents heuristic random --deals 2000 --out runs/eval")
    add_game_arguments(parser, "; one play is one hand unless --option episode=game")
    add_match_arguments(parser, deals=1000, agents_help="; every pair among them plays a match")
    parser.add_argument("--no-duplicate", action="store_true", help="play each deal once instead of once per side")
    parser.add_argument("--out", default=None, metavar="DIR", help="folder for results.json and results.csv (default: print only)")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")
    parser.add_argument("--records", default=None, metavar="DIR",
                        help="save the game record of every play (docs/records.md): one JSON Lines file per match, "
                             "DIR/<game>__<agent A>__vs__<agent B>.jsonl; view one with 'whist replay FILE --html out.html'")
    parser.add_argument("--bid-stats", action="store_true",
                        help="after the match table, print bidding statistics from the game records (exact bids in Romanian "
                             "Whist, contracts made in Bid Whist, side contracts and nils made in Spades); records go to a temporary folder without --records")


def configure_teach(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist teach``."""
    from training.learn.teach import MAX_SEED

    _examples(parser,
              "A teacher plays every seat of fresh hands (or, with --student, the student plays and the teacher\n"
              "labels a share of its decisions: DAgger); each decision is stored with its observation, mask,\n"
              "global state, the teacher's action and per-action values, and the seat's return, in shards\n"
              "written atomically with a manifest (training/learn/teach.py). Ctrl-C keeps every finished shard;\n"
              "the same command resumes. Train on it with warm_start.dataset: DIR in a config.\n\n"
              "examples:\n"
              "  whist teach --game classic_whist --option honours=false --decisions 2000000 --workers 2 --out runs/data/classic\n"
              "  whist teach --game bid_whist --teacher pimc --decisions 20000 --shard-episodes 10 --out runs/data/bid_pimc\n"
              "  whist teach --game classic_whist --option honours=false --student zoo --label-share 0.5 --seed 1 \\\n"
              "              --decisions 500000 --out runs/data/classic_dagger\n"
              "  whist teach --records runs/served --out runs/data/human   # the human players' decisions of recorded games")
    add_game_arguments(parser, "; one episode is one hand unless --option episode=game")
    parser.add_argument("--teacher", default="heuristic", metavar="SPEC", help=f"the teacher ({_agent_specs()}; default: %(default)s)")
    parser.add_argument("--decisions", type=int, default=None, metavar="N",
                        help="decisions to store (all seats; required unless --records); a run ends at the end of the episode in which it reaches N "
                             "(episodes are stored whole: at most one episode more, as the last line says); the last shard "
                             "then holds fewer episodes, and a later run asking for more completes it")
    parser.add_argument("--out", required=True, metavar="DIR", help="the dataset folder (made, or resumed when it holds this dataset)")
    parser.add_argument("--student", default=None, metavar="SPEC", help="DAgger: the student plays every seat and the teacher labels")
    parser.add_argument("--label-share", type=float, default=1.0, metavar="P",
                        help="with --student: the share of the student's decisions the teacher labels (default: %(default)s)")
    parser.add_argument("--double-dummy", action="store_true",
                        help="also store the double-dummy value of every legal card in the real deal (card play): one exact "
                             "solve per card decision, which then sets the pace. Measured on one core: Classic Whist about "
                             "8 ms a decision with endplay installed (DDS), about 1 s without (20 to 80 s a hand); German and "
                             "Minnesota about 20 ms; Bid Whist about 0.3 s a decision (15 to 45 s a hand); Cutthroat Whist "
                             "(three hands of 17 cards) over 5 minutes for an early card of a hand; Romanian Whist none "
                             "(exact bids: no values). "
                             "The first solve of a fresh install compiles the solver (10 to 35 s, cached on disk)")
    parser.add_argument("--seed", type=int, default=0,
                        help=f"dataset seed, 0..{MAX_SEED}: its deals are a span of the TRAINING seed range of its own "
                             "(default: %(default)s)")
    parser.add_argument("--shard-episodes", type=int, default=100, metavar="E",
                        help="episodes per shard, the unit of resumption: a stopped run keeps its finished shards "
                             "(default: %(default)s; fewer for pimc)")
    parser.add_argument("--records", default=None, metavar="DIR",
                        help="instead of a teacher: the game records of DIR (*.jsonl: whist serve, whist play, whist eval "
                             "--records), every decision stored, those of --records-players labelled with the action played "
                             "(training/learn/records_dataset.py); --game, --option, --teacher, --student and --decisions "
                             "come from the records or do not apply")
    parser.add_argument("--records-players", nargs="+", default=["human"], metavar="LABEL",
                        help="with --records: the players (the records' player labels) whose decisions are labelled "
                             "(default: human)")
    _workers_and_ray(parser, "episodes")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")


def configure_agree(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist agree``."""
    from training.evaluation.seed_ranges import DEVELOPMENT, REPORT

    _examples(parser,
              "The teacher plays every seat of match deals; at each decision with a choice the student is asked\n"
              "too. Prints the share of decisions where both chose the same action, with a 95% interval over\n"
              "deals, overall and by phase.\n\n"
              "example: whist agree --game classic_whist --option honours=false --student zoo --teacher heuristic --deals 500")
    add_game_arguments(parser, "; one episode is one hand unless --option episode=game")
    parser.add_argument("--student", required=True, metavar="SPEC", help="the agent compared with the teacher")
    parser.add_argument("--teacher", default="heuristic", metavar="SPEC", help="the agent that plays (default: %(default)s)")
    parser.add_argument("--deals", type=int, default=500, help="deals (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=REPORT.start,
                        help=f"match seed of the deals (default: %(default)s, in {REPORT}; {DEVELOPMENT} for tuning)")
    _workers_and_ray(parser, "deals")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")


def configure_league(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist league``."""
    _examples(parser,
              "Each deal is stored as soon as it is played; running the same league again skips the deals\n"
              "already stored (and so resumes an interrupted one). A spec listed twice gets a suffix (random#2).\n\n"
              "example: whist league --game classic_whist --agents random heuristic random --deals 300")
    add_game_arguments(parser, "; one play is one hand unless --option episode=game")
    add_match_arguments(parser, deals=300)
    parser.add_argument("--db", default=_default_store(), metavar="PATH", help="results store (default: %(default)s)")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bar")


def configure_leaderboard(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist leaderboard``."""
    _examples(parser, "example: whist leaderboard --db runs/results.sqlite --game classic_whist")
    parser.add_argument("--db", default=_default_store(), metavar="PATH", help="results store (default: %(default)s)")
    parser.add_argument("--game", default=None, help="only this game (default: every game in the store)")


def configure_bid_stats(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist bid-stats``."""
    _examples(parser, "It counts the bids and tricks the records state; it does not replay them (whist replay FILE\n"
                      "checks that a record replays under its game's rules).\n\n"
                      "example: whist bid-stats runs/records/romanian_whist__heuristic__vs__random.jsonl")
    parser.add_argument("files", nargs="+", metavar="FILE.jsonl", help="game records (JSON Lines), e.g. from whist eval --records DIR")
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON instead of tables")


# ---------------------------------------------------------------------------------- viewers
def configure_curve(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist curve``."""
    _examples(parser,
              "Writes <out>/<game>/<run name>.csv per run folder (one row per in-training evaluation) and\n"
              "<plots>/<game>.png per game: win rate against the heuristic and random by steps and by CPU-hours,\n"
              "one line per run, with the 95% interval; docs/generate.py puts them on the game pages.\n\n"
              "example:\n"
              "  whist curve runs/classic_scratch_s0 runs/classic_scratch_s1")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="training run folders (config.yaml and event files)")
    parser.add_argument("--out", default="reports/curves", help="folder of the CSVs, one subfolder per game (default: %(default)s)")
    parser.add_argument("--plots", default="docs/assets/curves", help="folder of the figures, <game>.png (default: %(default)s)")
    parser.add_argument("--subtitle", default="PPO from scratch",
                        help="the figures' title after the game's name (default: %(default)s); fine-tuning runs go to their own "
                             "--out and --plots, e.g. reports/finetune and docs/assets/finetune")


def configure_plot(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist plot``."""
    _examples(parser,
              "Writes, as the inputs allow: winrate_heatmap_<game>.png and ratings_<game>.png per game of the\n"
              "store (a suffix _2, _3 ... when a game was played with several option sets), learning_curve.png\n"
              "from --logdir, bid_accuracy.png from --records.\n\n"
              "examples (paths the main job and whist league create):\n"
              "  whist plot --logdir runs/classic_default --out runs/plots\n"
              "  whist plot --db runs/results.sqlite --logdir runs/classic_default --out runs/plots")
    parser.add_argument("--db", default=None, metavar="PATH", help=f"results store (default: {_default_store()} when it exists)")
    parser.add_argument("--game", default=None, help="only this game's leaderboards (default: every game)")
    parser.add_argument("--logdir", nargs="+", default=[], metavar="RUNDIR", help="training run folders with tensorboard logs")
    parser.add_argument("--records", nargs="+", default=[], metavar="FILE.jsonl", help="game record files (Romanian Whist bid accuracy)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the PNG files")


def configure_replay(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist replay``."""
    _examples(parser,
              "Keys in the page: → / ← one action, ↓ / ↑ (PageDown / PageUp) one trick, Home / End.\n"
              "Exit status 1 (the page is still written, with a red banner) when the record does not replay.\n\n"
              "example: whist replay runs/records/classic_whist__heuristic__vs__random.jsonl --index 3 --html replay.html")
    parser.add_argument("record", metavar="RECORD.jsonl", help="JSON Lines file of game records (docs/records.md)")
    parser.add_argument("--index", type=int, default=None,
                        help="which record of the file, 0-based; negative counts from the end (default: the first; "
                             "a file of several records then says how many it holds)")
    parser.add_argument("--viewer", default=None, metavar="AGENT", help="show only this agent's cards, e.g. player_0 (default: every hand)")
    parser.add_argument("--html", required=True, metavar="OUT.html", help="the page to write")


def configure_play(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist play``."""
    _examples(parser,
              "Type a card as QH, TH (ten of hearts), 10h or qh, an action by its label (bid:3, pass, bid:5:uptown, trump:H),\n"
              "'help' for the legal actions, 'quit' to leave.\n\n"
              "example: whist play --game classic_whist --seat 0 --opponents heuristic --option episode=hand")
    add_game_arguments(parser)
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0-based: you play player_<seat> (default: %(default)s)")
    parser.add_argument("--opponents", default="heuristic", metavar="SPEC",
                        help=f"agent for every other seat: {_agent_specs()} (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the opponents (default: random)")
    parser.add_argument("--record", default=None, metavar="OUT.jsonl",
                        help="where to save the game record (default: runs/play/<game>-<date>.jsonl)")


def configure_serve(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist serve``."""
    _examples(parser,
              "Needs the optional extra whist-env[serve] (Starlette, uvicorn, websockets). Each person opens the link of\n"
              "their seat (printed at start); several people can share a table, agents fill the other seats. The page\n"
              "shows only what that seat may know; its analysis box asks pimc for the values of your options now, and\n"
              "after each hand shows each card's double-dummy value and the learned agents' action probabilities.\n"
              "Bound to 127.0.0.1 by default; any other --host puts a token in every link, needed by every request.\n\n"
              "examples:\n"
              "  whist serve --game classic_whist --seats human,zoo,heuristic,pimc\n"
              "  whist serve --game bid_whist --seats human heuristic human heuristic --timeout 90\n"
              "  whist serve --game german_whist --seats human zoo --option episode=hand --records runs/serve")
    add_game_arguments(parser)
    parser.add_argument("--seats", nargs="+", default=None, metavar="SPEC",
                        help=f"who sits where, in seat order: 'human' for a person, else an agent spec ({_agent_specs()}); "
                             "one per seat, separated by spaces or commas (default: human in seat 0, heuristic elsewhere)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s, this machine only; any other address needs the "
                             "token printed in the links)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    parser.add_argument("--records", default="runs/serve", metavar="DIR",
                        help="folder of the game records, one JSON Lines file a game (whist replay shows them) (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="seconds a person may take over a decision before the --fallback agent makes it, so that a closed "
                             "browser does not stall the table (0: no limit) (default: %(default)s)")
    parser.add_argument("--fallback", default="heuristic", metavar="SPEC",
                        help="agent that makes a person's decision after --timeout (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first game's deal and of the agents (default: random)")
    parser.add_argument("--pace", type=float, default=0.6, metavar="S",
                        help="seconds between two agents' actions, so that people can follow (default: %(default)s)")
    parser.add_argument("--analysis-worlds", type=int, default=16, metavar="N",
                        help="worlds pimc draws when it analyses a person's decision (default: %(default)s)")


# ---------------------------------------------------------------------------------- wiring
#: subcommand -> (one-line help, argument builder, "module:function" that carries it out)
def configure_zoo_export(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist zoo-export``."""
    from agents.learned.zoo import ZOO_DIR
    from training.evaluation.seed_ranges import REPORT

    parser.add_argument("run_dir", metavar="RUN_DIR", help="a finished whist train run folder (it holds checkpoints/final.pt)")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals against random and heuristic each (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=2027,
                        help=f"match seed of the evaluation deals, in the seed range {REPORT} of published figures "
                             "(training/evaluation/seed_ranges.py) (default: %(default)s)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=f"folder for <game>.pt and <game>.json (default: RUN_DIR/zoo); the shipped zoo is {ZOO_DIR}")
    parser.add_argument("--force", action="store_true",
                        help="allow --out to be the shipped zoo, replacing its agent of the game: it also takes at least as many "
                             "--deals as the shipped agent's manifest, and the old and new tables are printed side by side first")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="export a run trained (or exported) from a checkout with uncommitted changes to the code or configs, "
                             "which nobody could rebuild; the manifest records \"dirty\": true")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")
    _examples(parser,
              "examples:\n"
              "  whist zoo-export runs/classic_strong                 # writes runs/classic_strong/zoo/classic_whist.{pt,json}\n"
              "  whist eval --option honours=false --agents checkpoint:runs/classic_strong/zoo/classic_whist.pt zoo heuristic\n"
              f"  whist zoo-export runs/classic_strong --out {ZOO_DIR} --force   # replace the shipped agent")


def configure_benchmark(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist benchmark``."""
    from training.evaluation.benchmark import DEFAULT_DB, PROTOCOL

    _examples(parser,
              f"Protocol v{PROTOCOL.version}: {PROTOCOL.deals} duplicate deals against each rung ({', '.join(PROTOCOL.rungs)}; zoo is\n"
              f"zoo:GAME) from match seed {PROTOCOL.seed:,}, the game's default rules"
              f"{' (' + PROTOCOL.rules_text(markdown=False) + ')' if PROTOCOL.rules else ''}, one hand a play.\n"
              "Writes OUT/<agent>.json and .md (<agent>__smoke.* with --smoke); each deal is stored in --db as played, so the same command resumes.\n\n"
              "examples:\n"
              "  whist benchmark heuristic --game classic_whist --workers 2\n"
              "  whist benchmark checkpoint:runs/classic_default/checkpoints/final.pt --game classic_whist\n"
              "  whist benchmark python:my_agents:policy --game german_whist   # ATTR: a policy, or factory(game, seed)\n"
              "  whist benchmark random --game classic_whist --smoke            # a few deals, outside the protocol")
    parser.add_argument("spec", metavar="SPEC", help=f"the agent to benchmark: {_agent_specs()}")
    add_game_arguments(parser, "; named in the report as a change from the protocol's rules")
    parser.add_argument("--out", default=None, metavar="DIR", help="folder of the report (default: runs/benchmark/GAME)")
    parser.add_argument("--db", default=str(DEFAULT_DB), metavar="PATH", help="results store of the deals (default: %(default)s)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"{PROTOCOL.smoke_deals} deals a rung, for tests; the report says it is outside the protocol")
    _workers_and_ray(parser, "deals")
    parser.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")


def configure_benchmark_page(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``whist benchmark-page``."""
    from training.evaluation.benchmark import REPORTS_DIR

    _examples(parser, f"example: whist benchmark-page {REPORTS_DIR} --out docs/benchmarks.md")
    parser.add_argument("reports", nargs="?", default=str(REPORTS_DIR), metavar="DIR",
                        help="folder of the reports, DIR/<game>/<agent>.json (default: %(default)s)")
    parser.add_argument("--out", default="docs/benchmarks.md", metavar="PAGE.md", help="the page to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page differs from what it would write")


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], str]] = {
    "train": ("train an agent by self-play PPO from a YAML config, then evaluate it", configure_train,
              "training.learn.train:run_train"),
    "eval": ("play duplicate-deal matches between agents and report win rates with 95 percent confidence intervals",
             configure_eval, "training.evaluation.match:run_eval"),
    "teach": ("store a teacher's decisions (or DAgger labels of a student's) as a sharded, resumable dataset",
              configure_teach, "training.learn.teach_command:run"),
    "agree": ("how often a student chooses a teacher's action, on the teacher's games, with a 95 percent interval",
              configure_agree, "training.evaluation.agreement:run_agree"),
    "sb3-train": ("train one seat with sb3-contrib MaskablePPO against fixed opponents", configure_sb3_train,
                  "training.learn.sb3:run_sb3_train"),
    "rllib-train": ("train with PPO on Ray's RLlib (a local Ray or a cluster) from a YAML config, then evaluate it",
                    configure_rllib_train, "training.learn.rllib.train:run_rllib_train"),
    "benchmark": ("the benchmark protocol: an agent against random, heuristic, pimc and the zoo on fixed duplicate deals, "
                  "as a JSON and Markdown report", configure_benchmark, "training.evaluation.benchmark:run_benchmark"),
    "benchmark-page": ("the docs' benchmark-results page from the committed benchmark reports", configure_benchmark_page,
                       "training.evaluation.benchmark:run_benchmark_page"),
    "league": ("round robin of duplicate-deal matches between agents, stored, with openskill ratings", configure_league,
               "training.evaluation.league:run_league"),
    "leaderboard": ("recompute ratings and pairwise win rates from the results store", configure_leaderboard,
                    "training.evaluation.league:run_leaderboard"),
    "bid-stats": ("bidding statistics (exact bids, contracts made, side contracts and nils) from game records", configure_bid_stats,
                  "training.evaluation.bidding:run_bid_stats"),
    "plot": ("write PNG figures from the results store, tensorboard logs and game records", configure_plot,
             "training.viewers.plots:run_plot"),
    "curve": ("the published learning curves: a training run's evaluations as CSV, and each game's figure",
              configure_curve, "training.viewers.curves:run_curve"),
    "replay": ("write a self-contained HTML page that steps through a game record", configure_replay,
               "training.viewers.replay:run_replay"),
    "play": ("play a game in the terminal against any agents (heuristic, search, zoo, checkpoint, sb3, ...)", configure_play,
             "training.viewers.play:run_play"),
    "serve": ("serve a table in the browser: people play each other and any agents, with analysis on request",
              configure_serve, "training.viewers.serve.command:run_serve"),
    "zoo-export": ("evaluate a finished training run and make it the model zoo's agent of its game", configure_zoo_export,
                   "training.learn.zoo:run_zoo_export"),
}


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up (git runs) only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: str | None = None) -> None:
        import whist_env
        from whist_env.provenance import code_version

        print(f"whist-env {code_version(whist_env.__version__)}")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level argument parser with one subparser per subcommand; only ``command``'s
    arguments are built (the others are listed with their one-line help)."""
    parser = WhistArgumentParser(prog="whist", description="whist-env: train and evaluate agents for Whist-family games.")
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="print the package version (with the commit of a git checkout) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.command_parsers = {}
    for name, (help_text, configure, _) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        parser.command_parsers[name] = p
        if name == command:
            configure(p)
    return parser


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away: point stdout at /dev/null so that the interpreter's final
    flush does not raise again (Python docs, "Note on SIGPIPE"); exit status 141 as for SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``whist`` console script; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    # torch's CPU allocator backs tensors of 2 MB and more with transparent huge pages: a large
    # fresh tensor (a batch's observation) then costs a few page faults instead of thousands,
    # read by torch at its first large allocation; the user's own setting wins
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops a command as Ctrl-C does
    try:
        args = build_parser(command if command in SUBCOMMANDS else None).parse_args(argv)
    except KeyboardInterrupt:
        print(f"\nwhist{'' if command not in SUBCOMMANDS else ' ' + command}: interrupted", file=sys.stderr)
        return 130
    module, _, function = SUBCOMMANDS[args.command][2].partition(":")
    try:
        status = int(getattr(importlib.import_module(module), function)(args) or 0)
        sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
        return status
    except Interrupted as exc:
        print(f"\nwhist {args.command}: interrupted: {exc}", file=sys.stderr)
        return exc.status
    except CommandError as exc:
        print(f"whist {args.command}: error: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        print(f"\nwhist {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _quiet_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
