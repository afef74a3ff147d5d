"""``whist serve``: the command that seats people and agents at a table and serves it to
browsers (arguments: :func:`training.cli.configure_serve`).

It needs the optional extra ``whist-env[serve]`` (Starlette, uvicorn, websockets); without it
the command says so and exits with status 2. The server binds 127.0.0.1 by default; any other
``--host`` gets a token (``secrets.token_urlsafe``), printed in the table links, which every
request must carry.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import secrets
import socket
from pathlib import Path
from typing import Any

from training.errors import CommandError, Interrupted

#: The packages of the ``serve`` extra, as imported.
SERVE_PACKAGES = ("starlette", "uvicorn", "websockets")
EXTRA_HINT = "whist serve needs the optional extra: pip install 'whist-env[serve]' (Starlette, uvicorn, websockets)"


def missing_packages() -> list[str]:
    """The packages of the ``serve`` extra that are not installed."""
    return [name for name in SERVE_PACKAGES if importlib.util.find_spec(name) is None]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) names only this machine's loopback interface."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def table_links(host: str, port: int, humans: list[str], token: str | None) -> list[str]:
    """The URL of each human seat's page (``http://HOST:PORT/seat/player_k[?token=...]``); a
    wildcard host (``0.0.0.0``, ``::``: every interface) is written as this machine's name."""
    if host.strip("[]") in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    query = "" if token is None else f"?token={token}"
    return [f"http://{shown}:{port}/seat/{a}{query}" for a in humans]


def build_host(args: Any) -> Any:
    """The :class:`~training.viewers.serve.host.TableHost` of the command's arguments.

    Raises:
        ValueError: a bad game, option, seat spec, fallback spec or analysis setting.
    """
    from training.viewers.serve.analysis import Analyst
    from training.viewers.serve.host import TableHost
    from training.viewers.serve.table import Table, split_seats
    from whist_env import GAMES

    if args.game not in GAMES:
        raise ValueError(f"unknown game {args.game!r}; games: {', '.join(GAMES)}")
    options = dict(args.option)
    seats = split_seats(args.seats) if args.seats else None
    if seats is None:  # a person in seat 0, the rule-based player elsewhere
        n = len(GAMES[args.game].raw_env(**options).possible_agents)
        seats = ["human"] + ["heuristic"] * (n - 1)
    if args.timeout < 0:
        raise ValueError(f"--timeout must be >= 0 seconds (0: no limit), got {args.timeout}")
    if args.pace < 0:
        raise ValueError(f"--pace must be >= 0 seconds, got {args.pace}")
    table = Table(args.game, seats, options=options, seed=args.seed, records_dir=args.records, fallback=args.fallback)
    analyst = Analyst(args.game, worlds=args.analysis_worlds, seed=table.base_seed)
    return TableHost(table, analyst, timeout=args.timeout or None, pace=args.pace)


def run_serve(args: Any) -> int:
    """Carry out ``whist serve``: build the table, print its links, serve until Ctrl-C.

    Returns:
        0 once the server stops.
    Raises:
        CommandError: the ``serve`` extra is missing, or a bad game, option, seat spec, host
            or port (status 2).
        Interrupted: Ctrl-C before the server started.
    """
    missing = missing_packages()
    if missing:
        raise CommandError(f"{EXTRA_HINT}; missing: {', '.join(missing)}")
    import uvicorn

    from training.viewers.serve.app import create_app

    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be in 0..65535, got {args.port}")
    try:
        host = build_host(args)
    except (ValueError, TypeError, OSError, ImportError, RuntimeError, KeyError) as err:
        raise CommandError(str(err)) from None
    except KeyboardInterrupt:
        raise Interrupted("no table was served") from None
    token = None if is_loopback(args.host) else secrets.token_urlsafe(24)
    app = create_app(host, token)
    table = host.table
    print(f"whist serve: {table.game}, seats: " + ", ".join(f"{a} {s}" for a, s in table.specs.items()))
    limit = (f"a person's decision goes to {args.fallback} after {args.timeout:g} s without a move" if args.timeout
             else "no time limit on a person's decision")
    print(f"records: {Path(args.records).resolve() if args.records else 'not written'}; {limit}")
    if token is not None:
        print(f"the server listens on {args.host}, not only on this machine: every link carries its token; share each only "
              "with the person of that seat")
    for link in table_links(args.host, args.port, table.humans, token):
        print(f"  {link}")
    print("Ctrl-C stops the server (an unfinished game's completed hands are stored).", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    for path in table.saved:
        print(f"record saved to {path} (view it: whist replay {path} --html replay.html)")
    return 0


__all__ = ["EXTRA_HINT", "build_host", "is_loopback", "missing_packages", "run_serve", "table_links"]
