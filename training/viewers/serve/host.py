"""The table in time: an asyncio task that plays the :class:`~training.viewers.serve.table.Table`
action by action, waits for people, hands a silent person's decision to the fallback agent,
runs agents and analysis in threads, and sends every seat's browsers their view.

Each browser of a seat is a :class:`Subscriber`: a queue of JSON messages that the web app
(:mod:`training.viewers.serve.app`) sends down that browser's websocket. A seat receives only
messages built for it: its own view, its own errors, the analysis it asked for. Every message
carries ``game`` (the game number, from 0) and ``step`` (the actions applied in that game when
the message was made).

Messages to a browser (JSON objects, ``type``):

* ``"view"``: ``view`` (:meth:`Table.view`, with ``deadline``: seconds left for this seat's
  decision or ``None``, ``connected``: agent -> browsers open, ``analysis_on``);
* ``"error"``: ``message``: a refused move or request (nothing was changed);
* ``"analysis"``: ``result`` (:meth:`Analyst.pimc_values`) for the decision at ``step``;
* ``"review"``: ``result`` (:meth:`Analyst.review`) of a finished hand.

Messages from a browser (:meth:`TableHost.receive`): ``{"type": "act", "action": label or id,
"step": n}``, ``{"type": "analyse"}`` (``pimc`` at the seat's decision now), ``{"type":
"analysis", "on": bool}`` (analyse each of the seat's decisions, and review each hand when it
ends), ``{"type": "review", "hand": k}`` (a finished hand, from 0), ``{"type": "new_game"}``
(once the game is over).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from training.viewers.serve.analysis import Analyst
from training.viewers.serve.table import MAX_MESSAGE, MoveRefused, Table


class Subscriber:
    """One browser of one seat: the messages waiting to be sent to it.

    Attributes:
        agent: the seat.
        queue: ``asyncio.Queue`` of JSON-ready dicts, in order.
    """

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, message: dict[str, Any]) -> None:
        """Queue ``message`` for this browser."""
        self.queue.put_nowait(message)


class TableHost:
    """Drives a :class:`Table` in asyncio (module docstring).

    Args:
        table: the table.
        analyst: the analysis of the human seats.
        timeout: seconds a person may take over a decision before the fallback agent makes it
            (> 0; ``None`` or 0: no limit).
        pace: seconds between two agents' actions, so that people can follow them (>= 0).
    """

    def __init__(self, table: Table, analyst: Analyst, timeout: float | None = 60.0, pace: float = 0.5) -> None:
        self.table = table
        self.analyst = analyst
        self.timeout = timeout if timeout else None
        self.pace = max(0.0, float(pace))
        self.subscribers: dict[str, set[Subscriber]] = {a: set() for a in table.agents}
        self.analysis_on: dict[str, bool] = dict.fromkeys(table.agents, False)
        self.deadline: float | None = None  # loop time at which the person to act is replaced
        self._move: asyncio.Future[int] | None = None
        self._waiting: str | None = None
        self._new_game: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._analysing: set[tuple[str, int, int]] = set()
        self.errors: list[str] = []  # failures of the table task (an agent that raised), for the log

    # ------------------------------------------------------------------ browsers
    def subscribe(self, agent: str) -> Subscriber:
        """A new browser of ``agent``'s seat; it is sent the seat's view at once.

        Raises:
            ValueError: ``agent`` is not a human seat of the table.
        """
        if not self.table.is_human(agent):
            raise ValueError(f"{agent} is not a human seat; human seats: {', '.join(self.table.humans)}")
        sub = Subscriber(agent)
        self.subscribers[agent].add(sub)
        self.broadcast()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        """Forget a browser that went away (its seat keeps playing: the timeout still applies)."""
        self.subscribers[sub.agent].discard(sub)
        self.broadcast()

    def _tag(self, message: dict[str, Any]) -> dict[str, Any]:
        message["game"] = self.table.game_number
        message["step"] = self.table.step
        return message

    def view_message(self, agent: str) -> dict[str, Any]:
        """The ``"view"`` message of ``agent``'s seat now."""
        view = dict(self.table.view(agent))
        left = None
        if self.deadline is not None and self._waiting == agent:
            left = max(0.0, round(self.deadline - asyncio.get_running_loop().time(), 1))
        view["deadline"] = left
        view["timeout"] = self.timeout
        view["connected"] = {a: len(s) for a, s in self.subscribers.items() if self.table.is_human(a)}
        view["analysis_on"] = self.analysis_on[agent]
        return self._tag({"type": "view", "view": view})

    def broadcast(self) -> None:
        """Send every browser its seat's view."""
        for agent, subs in self.subscribers.items():
            if subs:
                message = self.view_message(agent)
                for sub in subs:
                    sub.put(message)

    def send(self, agent: str, message: dict[str, Any], only: Subscriber | None = None) -> None:
        """Send ``message`` (tagged) to ``agent``'s browsers, or to one of them."""
        message = self._tag(message)
        for sub in ([only] if only is not None else list(self.subscribers[agent])):
            sub.put(message)

    # ------------------------------------------------------------------ requests
    def receive(self, sub: Subscriber, text: str) -> None:
        """Handle one message from a browser (module docstring); a malformed or refused one is
        answered with an ``"error"`` message to that browser only and changes nothing."""
        try:
            if len(text) > MAX_MESSAGE:
                raise MoveRefused(f"message too long ({len(text)} characters; at most {MAX_MESSAGE})")
            try:
                message = json.loads(text)
            except (json.JSONDecodeError, TypeError):
                raise MoveRefused("not a JSON message") from None
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                raise MoveRefused("a message is a JSON object with a \"type\": act, analyse, analysis, review or new_game")
            kind = message["type"]
            if kind == "act":
                self._act(sub.agent, message)
            elif kind == "analyse":
                self._analyse(sub.agent)
            elif kind == "analysis":
                on = message.get("on")
                if not isinstance(on, bool):
                    raise MoveRefused("analysis needs \"on\": true or false")
                self.analysis_on[sub.agent] = on
                if on and self._waiting == sub.agent:
                    self._analyse(sub.agent)
                self.broadcast()
            elif kind == "review":
                hand = message.get("hand")
                if isinstance(hand, bool) or not isinstance(hand, int):
                    raise MoveRefused("review needs \"hand\": a finished hand's number, from 0")
                self._review(sub.agent, hand)
            elif kind == "new_game":
                if not self.table.over:
                    raise MoveRefused("the game is not over yet")
                if self._new_game is not None:
                    self._new_game.set()
            else:
                raise MoveRefused(f"unknown message type {kind!r}: act, analyse, analysis, review or new_game")
        except MoveRefused as why:
            self.send(sub.agent, {"type": "error", "message": str(why)}, only=sub)

    def _act(self, agent: str, message: dict[str, Any]) -> None:
        if self._waiting != agent or self._move is None or self._move.done():
            # checked first: while an agent (or the fallback) thinks in a thread, the env is not read here
            to_act = self.table.to_act
            if to_act != agent:
                raise MoveRefused("the game is over" if to_act is None else f"it is not your turn: {to_act} is to act")
            raise MoveRefused("the table is not waiting for your move (the fallback agent is making it)")
        self._move.set_result(self.table.parse_move(agent, message))  # raises MoveRefused

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _analyse(self, agent: str) -> None:
        if self._waiting != agent:
            raise MoveRefused("analysis is of your own decision: wait for your turn")
        key = (agent, self.table.game_number, self.table.step)
        if key in self._analysing:
            return
        self._analysing.add(key)
        clone, step = self.table.env.clone(), self.table.step
        self._spawn(self._send_analysis(agent, clone, step))

    async def _send_analysis(self, agent: str, clone: Any, step: int) -> None:
        try:
            result = await asyncio.to_thread(self.analyst.pimc_values, clone, agent, step)
            self.send(agent, {"type": "analysis", "decision_step": step, "result": result})
        except Exception as err:  # an analysis that fails must not stop the table
            self.send(agent, {"type": "error", "message": f"analysis failed: {err}"})

    def _review(self, agent: str, hand: int) -> None:
        table = self.table
        finished = {h["hand_number"] for h in table.hands_done}
        if hand not in finished:
            raise MoveRefused(f"hand {hand + 1} is not over: a review needs the hand finished (it depends on hidden cards)")
        solve = [d for d in table.solve_decisions if d.hand_number == hand and d.agent == agent]
        nets = [d for d in table.network_decisions if d.hand_number == hand]
        known = set(table.known[agent])
        game = table.game_number
        self._spawn(self._send_review(agent, hand, solve, nets, known, game))

    async def _send_review(self, agent: str, hand: int, solve: list[Any], nets: list[Any], known: set[str], game: int) -> None:
        try:
            result = await asyncio.to_thread(self.analyst.review, hand, agent, solve, nets, known)
            if game == self.table.game_number:
                self.send(agent, {"type": "review", "result": result})
        except Exception as err:  # as _send_analysis
            self.send(agent, {"type": "error", "message": f"review failed: {err}"})

    # ------------------------------------------------------------------ the game
    async def run(self) -> None:
        """Play games for ever: each to its end, then wait for a ``new_game`` request."""
        self._new_game = asyncio.Event()
        while True:
            await self.play_game()
            self._new_game.clear()
            await self._new_game.wait()
            self.table.start_game()

    async def play_game(self) -> None:
        """Play the table's current game to its end (its record is written by the table).
        Every seat is sent one view a step: before each decision, and at the end."""
        table = self.table
        loop = asyncio.get_running_loop()
        while not table.over:
            agent = table.to_act
            hand = table.hand_number
            if table.is_human(agent):
                action, by = await self._human_decision(agent, loop)
            else:
                self.broadcast()
                if self.pace:
                    await asyncio.sleep(self.pace)
                try:
                    action, by = await asyncio.to_thread(table.agent_action), "agent"
                except Exception as err:  # an agent that fails must not stop the table
                    self.errors.append(f"{agent}: {type(err).__name__}: {err}")
                    table.note_failure(agent, err)
                    action, by = await asyncio.to_thread(table.fallback_action), "fallback"
            table.apply(action, by)
            if table.hand_number != hand or table.over:
                for h in table.humans:
                    if self.analysis_on[h]:
                        self._review(h, hand)
        self.broadcast()

    async def _human_decision(self, agent: str, loop: asyncio.AbstractEventLoop) -> tuple[int, str]:
        """The person's move, or the fallback agent's after the timeout."""
        self._move = loop.create_future()
        self._waiting = agent
        self.deadline = None if self.timeout is None else loop.time() + self.timeout
        start = time.monotonic()
        self.broadcast()
        if self.analysis_on[agent]:
            self._analyse(agent)
        try:
            action = await asyncio.wait_for(asyncio.shield(self._move), self.timeout)
            by = "human"
        except asyncio.TimeoutError:
            self._waiting = None
            self.table.note_timeout(agent, round(time.monotonic() - start, 1))
            action, by = await asyncio.to_thread(self.table.fallback_action), "fallback"
        finally:
            self._waiting, self._move, self.deadline = None, None, None
        return action, by

    async def close(self) -> None:
        """Stop the analysis tasks and write the record of an unfinished game's completed hands."""
        for task in list(self._tasks):
            task.cancel()
        self.table.save_partial_record()


__all__ = ["Subscriber", "TableHost"]
