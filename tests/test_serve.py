"""``whist serve`` without a browser (Starlette's TestClient): a whole hand of every game played
over a seat's websocket, no hidden card in anything a seat receives, refused moves change
nothing, the token, the timeout that hands a silent seat's move to the fallback agent, the
analysis, and the game records."""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="whist serve needs the serve extra (starlette)")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx (the dev extra)")

from serve_helpers import CARD, default_seats, has_zoo_agent, hidden_cards, make_host  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from training import cli  # noqa: E402
from training.viewers.serve.app import create_app  # noqa: E402
from training.viewers.serve.table import MoveRefused, Table, split_seats  # noqa: E402
from whist_env import GAMES, games  # noqa: E402
from whist_env.records import read_records, replay_record, table_digest  # noqa: E402

try:  # Starlette's TestClient raises this for a websocket refused with an HTTP answer
    from starlette.testclient import WebSocketDenialResponse
except ImportError:  # pragma: no cover - older Starlette: a close before accept
    WebSocketDenialResponse = WebSocketDisconnect


_RECEIVER = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="ws-receive")


def recv(ws, timeout: float = 30.0) -> dict:
    """The next message of a test websocket, or a failure after ``timeout`` seconds (a test that
    waits for a message that never comes fails instead of hanging)."""
    try:
        return _RECEIVER.submit(ws.receive_json).result(timeout)
    except concurrent.futures.TimeoutError:
        raise AssertionError(f"no message in {timeout:g} s") from None


def play_seat(ws, agent: str, choose=lambda view: view["legal"][0]["label"], until_review: bool = False, limit: int = 2000) -> list[dict]:
    """Play ``agent``'s decisions over its websocket until the game is over (and, with
    ``until_review``, a hand review has come): returns every message received."""
    messages, answered, done = [], set(), False
    for _ in range(limit):
        m = recv(ws)
        messages.append(m)
        if m["type"] == "view":
            v = m["view"]
            done = done or v["done"] or v["truncated"]
            if v["to_act"] == agent and v["legal"] and m["step"] not in answered:
                answered.add(m["step"])
                ws.send_text(json.dumps({"type": "act", "action": choose(v), "step": m["step"]}))
        if done and (not until_review or any(x["type"] == "review" for x in messages)):
            return messages
    raise AssertionError(f"the game did not end within {limit} messages")


def record_of(host) -> dict:
    assert host.table.record_path is not None, "the record was not written"
    records = read_records(host.table.record_path)
    assert len(records) == 1
    return records[0]


# ------------------------------------------------------------------ a whole hand, and what a seat may see
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_whole_hand_over_the_websocket_shows_no_hidden_card(game, tmp_path):
    # Spades is solved only where no one bid nil (the side's trick total then decides the points):
    # a deal where the agents bid none, and the person bids its first call that is not a nil
    host = make_host(game, default_seats(game), records_dir=tmp_path, seed=5 if game == "spades" else 4)

    def first_not_nil(view):
        labels = [x["label"] for x in view["legal"]]
        return next((label for label in labels if label not in ("bid:nil", "bid:blind_nil")), labels[0])

    with TestClient(create_app(host)) as client:
        assert client.get("/seat/player_0").status_code == 200
        with client.websocket_connect("/ws/player_0") as ws:
            ws.send_text(json.dumps({"type": "analysis", "on": True}))
            messages = play_seat(ws, "player_0", choose=first_not_nil, until_review=True)
    record = record_of(host)
    assert replay_record(record).ok
    assert record["players"]["player_0"] == "human" and record["meta"]["timeouts"] == []
    humans = [a for a in record["actions"] if a["agent"] == "player_0"]
    assert humans, "the person made no decision"
    views = [m["view"] for m in messages if m["type"] == "view"]
    assert views[-1]["done"] and views[-1]["score"] == record["result"]["scores"]
    # the hidden-card check: every card in every message is one player_0 could see then
    assert hidden_cards(messages, record, "player_0") == []
    # what the page shows: the seat's own hand only, the legal actions on its turns only, and
    # every public fact of the rules that had a value (turn-up, contract, stock top, bid cards ...)
    shown = set()
    for v in views:
        assert set(v) >= {"hand", "legal", "table", "tricks_won", "score", "trump", "log", "facts", "agent_facts", "private"}
        assert (v["to_act"] == "player_0") == bool(v["legal"]) or v["done"]
        assert set(v["private"]) <= {"player_0"}
        shown |= {label for label, _ in v["facts"] + v["side_facts"]}
        shown |= {label for facts in v["agent_facts"].values() for label, _ in facts}
    public = _public_fact_labels(record)
    assert public <= shown, f"public facts never shown: {public - shown}"
    assert any("plays" in line["text"] for line in views[-1]["log"])
    kinds = {m["type"] for m in messages}
    assert "analysis" in kinds and "review" in kinds
    review = next(m["result"] for m in messages if m["type"] == "review")
    assert [d["step"] for d in review["double_dummy"]] == sorted(d["step"] for d in review["double_dummy"])
    for d in review["double_dummy"]:
        assert not d["values"] or d["played"] in d["values"]
    if games.spec(game).decision("play").search == "solve":
        assert any(d["values"] for d in review["double_dummy"]), review
    if has_zoo_agent(game):
        assert review["network"], "the zoo agent's decisions are reviewed"
        for n in review["network"]:
            assert n["agent"] == "player_1" and abs(sum(n["probabilities"].values()) - 1) < 0.02
    else:  # no trained agent of the game: no learned seat, no network to review
        assert record["players"]["player_1"] == "heuristic" and review["network"] == []


def _public_fact_labels(record: dict) -> set[str]:
    """Labels of the rules' public facts that had a value at some point of the record's game."""
    env = GAMES[record["game"]].raw_env(**record["options"])
    env.reset(seed=record["seed"])
    labels = set()

    def look() -> None:
        for key, value in env.game.public_state().items():
            if value is not None and value != () and not (isinstance(value, tuple) and all(v is None for v in value)):
                labels.add(key.replace("_", " "))

    look()
    for entry in record["actions"]:
        env.step(entry["action"])
        if not (env.game.done or env.game.truncated):
            look()
    return labels


def test_two_people_share_a_table_and_each_sees_only_their_own_cards(tmp_path):
    host = make_host("classic_whist", ["human", "heuristic", "human", "zoo"], records_dir=tmp_path)
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as a, client.websocket_connect("/ws/player_2") as b:
            received: dict[str, list[dict]] = {}

            def person(agent, ws):  # each person at their own browser
                received[agent] = play_seat(ws, agent, choose=lambda v: v["legal"][-1]["label"])

            people = [threading.Thread(target=person, args=(agent, ws)) for agent, ws in (("player_0", a), ("player_2", b))]
            for p in people:
                p.start()
            for p in people:
                p.join(120)
    record = record_of(host)
    assert replay_record(record).ok and record["meta"]["timeouts"] == []
    assert {a["agent"] for a in record["actions"]} == set(record["players"])
    for agent, messages in received.items():
        assert messages and hidden_cards(messages, record, agent) == []
        assert all(set(m["view"]["private"]) <= {agent} for m in messages if m["type"] == "view")


# ------------------------------------------------------------------ refused moves
def _bad_messages(view: dict) -> list[tuple[str | bytes, str]]:
    """(message, a word the refusal says) pairs: malformed, illegal or out of turn."""
    hand = set(view["hand"])
    legal = {x["label"] for x in view["legal"]}
    not_legal = sorted(hand - legal)
    out = [
        ("this is not json", "JSON"),
        ("[1, 2, 3]", "object"),
        (json.dumps({"action": "QH"}), "type"),
        (json.dumps({"type": "act"}), "action"),
        (json.dumps({"type": "act", "action": None}), "action"),
        (json.dumps({"type": "act", "action": True}), "action"),
        (json.dumps({"type": "act", "action": [1]}), "action"),
        (json.dumps({"type": "act", "action": "XX"}), "unknown action"),
        (json.dumps({"type": "act", "action": "bid:99"}), "unknown action"),
        (json.dumps({"type": "act", "action": 999}), "not legal"),
        (json.dumps({"type": "act", "action": -1}), "not legal"),
        (json.dumps({"type": "act", "action": sorted(legal)[0], "step": view["step"] + 5}), "stale"),
        (json.dumps({"type": "act", "action": sorted(legal)[0], "step": "now"}), "stale"),
        (json.dumps({"type": "review", "hand": 0}), "not over"),
        (json.dumps({"type": "review", "hand": "zero"}), "review"),
        (json.dumps({"type": "new_game"}), "not over"),
        (json.dumps({"type": "analysis", "on": "yes"}), "analysis"),
        (json.dumps({"type": "shuffle"}), "unknown message type"),
        ("{" + " " * 5000 + "}", "too long"),
        (b"\x00\x01", "binary"),
    ]
    unheld = next(c for c in (f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA") if c not in hand)
    out.append((json.dumps({"type": "act", "action": unheld}), "not legal"))
    if not_legal:  # a card held but not legal now (it does not follow suit, or the phase wants a call)
        out.append((json.dumps({"type": "act", "action": not_legal[0]}), "not legal"))
    return out


@pytest.mark.parametrize("game", ["classic_whist", "bid_whist"])
def test_illegal_and_malformed_messages_are_refused_and_change_nothing(game, tmp_path):
    seed = next(s for s in range(100) if make_host(game, default_seats(game, learned=None), seed=s).table.to_act != "player_0")
    host = make_host(game, default_seats(game, learned=None), records_dir=tmp_path, seed=seed)
    host.pace = 0.5  # agents wait: a move sent now arrives while another seat is to act
    table = host.table
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            first = _next_view(ws, lambda v: True)
            assert first["to_act"] != "player_0" and first["legal"] == []
            ws.send_text(json.dumps({"type": "act", "action": first["hand"][0]}))
            assert "not your turn" in _next_error(ws)["message"]
            ws.send_text(json.dumps({"type": "analyse"}))
            assert "your turn" in _next_error(ws)["message"]
            host.pace = 0
            view = _next_turn(ws, "player_0")
            while view["phase"] in GAMES[game].raw_env().game.CARD_PLAY_PHASES and not view["table"]["cards"] and len(view["hand"]) > 3:
                ws.send_text(json.dumps({"type": "act", "action": view["legal"][0]["label"], "step": view["step"]}))  # to a trick in progress
                view = _next_turn(ws, "player_0")
            before = (table.step, table_digest(table.env), len(table.recorder.record["actions"]), json.dumps(table.view("player_0")))
            for message, word in _bad_messages(view):
                if isinstance(message, bytes):
                    ws.send_bytes(message)
                else:
                    ws.send_text(message)
                reply = _next_error(ws)
                assert word.lower() in reply["message"].lower(), (message, reply["message"])
                named = set(CARD.findall(message if isinstance(message, str) else ""))  # a card the message itself named
                assert set(CARD.findall(reply["message"])) <= set(view["hand"]) | set(view["table"]["cards"].values()) | named
                after = (table.step, table_digest(table.env), len(table.recorder.record["actions"]), json.dumps(table.view("player_0")))
                assert after == before, f"{message!r} changed the table"
            # the right move is still taken after all that, once
            move = {"type": "act", "action": view["legal"][0]["label"], "step": view["step"]}
            ws.send_text(json.dumps(move))
            later = _next_view(ws, lambda v: v["step"] > view["step"])
            assert table.recorder.record["actions"][view["step"]]["label"] == move["action"]
            ws.send_text(json.dumps(move))  # the same click again: stale now
            if later["to_act"] is not None:
                refusal = _next_error(ws)["message"]
                assert "stale" in refusal or "not your turn" in refusal


def _next_view(ws, predicate) -> dict:
    for _ in range(500):
        m = recv(ws)
        if m["type"] == "view" and predicate(m["view"]):
            return m["view"]
    raise AssertionError("no such view")


def _next_turn(ws, agent: str) -> dict:
    return _next_view(ws, lambda v: v["to_act"] == agent and bool(v["legal"]))


def _next_error(ws) -> dict:
    for _ in range(500):
        m = recv(ws)
        if m["type"] == "error":
            return m
    raise AssertionError("no error message")


def test_table_refuses_moves_directly():
    table = Table("german_whist", ["human", "heuristic"], options={"episode": "hand"}, seed=3)
    agent = table.to_act
    other = next(a for a in table.agents if a != agent)
    legal = table.legal()
    with pytest.raises(MoveRefused, match="not your turn"):
        table.parse_move(other, {"type": "act", "action": legal[0]})
    if table.is_human(agent):
        assert table.parse_move(agent, {"type": "act", "action": table.env.action_label(legal[0])}) == legal[0]
    with pytest.raises(ValueError, match="not legal"):
        table.apply(next(a for a in range(52) if a not in legal))


# ------------------------------------------------------------------ the token
def test_a_token_guards_every_request():
    host = make_host("german_whist", ["human", "heuristic"])
    token = "s3cret-Token_value"
    with TestClient(create_app(host, token=token)) as client:
        for path in ("/", "/seat/player_0", "/assets/table.js", "/assets/replay.css"):
            assert client.get(path).status_code == 403, path
            assert client.get(path + "?token=wrong").status_code == 403, path
            assert client.get(path + "?token=" + token).status_code == 200, path
        page = client.get("/seat/player_0?token=" + token).text
        assert f'data-token="{token}"' in page and f"/assets/table.js?token={token}" in page
        assert client.get("/assets/secrets.py?token=" + token).status_code == 404
        assert client.get("/seat/player_1?token=" + token).status_code == 404  # an agent's seat has no page
        for url in ("/ws/player_0", "/ws/player_0?token=wrong"):
            with pytest.raises((WebSocketDenialResponse, WebSocketDisconnect)) as refused:
                with client.websocket_connect(url) as ws:
                    recv(ws)
            status = getattr(refused.value, "status_code", None)
            assert status in (403, None) and (status == 403 or refused.value.code == 1008)
        with client.websocket_connect("/ws/player_0?token=" + token) as ws:
            assert recv(ws)["type"] == "view"
        with pytest.raises((WebSocketDenialResponse, WebSocketDisconnect)):  # another site's page, with the token
            with client.websocket_connect("/ws/player_0?token=" + token, headers={"origin": "http://evil.example"}) as ws:
                recv(ws)
        with client.websocket_connect("/ws/player_0?token=" + token, headers={"origin": "http://testserver"}) as ws:
            assert recv(ws)["type"] == "view"
        with pytest.raises((WebSocketDenialResponse, WebSocketDisconnect)):  # an agent's seat
            with client.websocket_connect("/ws/player_1?token=" + token) as ws:
                recv(ws)
    with TestClient(create_app(make_host("german_whist", ["human", "heuristic"]))) as client:  # loopback: no token
        assert client.get("/").status_code == 200


def test_the_command_makes_a_token_for_any_host_but_loopback(monkeypatch, capsys, tmp_path):
    import uvicorn

    from training.viewers.serve.app import TokenGate

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append((app, kw)))
    base = ["serve", "--game", "german_whist", "--seats", "human,heuristic", "--records", str(tmp_path), "--port", "8123"]
    assert cli.main(base) == 0
    app, kw = served[-1]
    assert isinstance(app, TokenGate) and app.token is None and kw["host"] == "127.0.0.1" and kw["port"] == 8123
    out = capsys.readouterr().out
    assert "http://127.0.0.1:8123/seat/player_0\n" in out and "?token=" not in out
    assert cli.main(base + ["--host", "0.0.0.0"]) == 0
    app, kw = served[-1]
    assert isinstance(app, TokenGate) and app.token and len(app.token) >= 24 and kw["host"] == "0.0.0.0"
    assert f":8123/seat/player_0?token={app.token}\n" in capsys.readouterr().out
    assert cli.main(base + ["--host", "0.0.0.0"]) == 0
    assert served[-1][0].token != app.token  # a new token at every start


def test_the_command_says_which_extra_it_needs(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    assert cli.main(["serve", "--game", "classic_whist"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist serve: error:") and "whist-env[serve]" in err and "uvicorn" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--seats", "human", "heuristic"], "4 seats"),
    (["--seats", "heuristic,heuristic,heuristic,heuristic"], "no seat is 'human'"),
    (["--seats", "human,nonsense,heuristic,heuristic"], "nonsense"),
    (["--option", "no_such_option=1"], "no_such_option"),
    (["--game", "bridge"], "unknown game"),
    (["--fallback", "nonsense"], "nonsense"),
    (["--timeout", "-1"], "--timeout"),
])
def test_bad_arguments_are_errors(argv, message, capsys, monkeypatch):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    assert cli.main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist serve: error:") and message in err, err


def test_seat_specs_split_on_commas_but_not_inside_a_search_agents_options():
    assert split_seats(["human,zoo,heuristic,pimc"]) == ["human", "zoo", "heuristic", "pimc"]
    assert split_seats(["human,pimc:worlds=8,rollouts=16", "heuristic", "zoo:classic_whist"]) == \
        ["human", "pimc:worlds=8,rollouts=16", "heuristic", "zoo:classic_whist"]


# ------------------------------------------------------------------ a closed browser does not stall the table
def test_a_silent_seat_is_played_by_the_fallback_and_the_person_can_come_back(tmp_path):
    host = make_host("classic_whist", default_seats("classic_whist", learned=None), records_dir=tmp_path, timeout=0.25)
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            first = _next_turn(ws, "player_0")
            assert first["deadline"] is not None and 0 < first["deadline"] <= 0.25
        # the browser is closed: the table goes on without it
        deadline = time.monotonic() + 30
        while len(host.table.timeouts) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(host.table.timeouts) >= 2
        with client.websocket_connect("/ws/player_0") as ws:  # back again: the seat's view, later in the hand
            view = _next_view(ws, lambda v: True)
            assert view["step"] > first["step"]
            assert any("made no move" in line["text"] and "heuristic" in line["text"] for line in view["log"])
            host.timeout = None  # no more fallbacks: the person plays the rest
            messages = play_seat(ws, "player_0")
    record = record_of(host)
    assert replay_record(record).ok
    timeouts = record["meta"]["timeouts"]
    assert len(timeouts) >= 2 and all(t["agent"] == "player_0" and t["fallback"] == "heuristic" for t in timeouts)
    assert hidden_cards(messages, record, "player_0") == []


# ------------------------------------------------------------------ analysis
def test_analysis_on_request_and_the_review_only_after_the_hand(tmp_path):
    host = make_host("cutthroat_whist", default_seats("cutthroat_whist"), records_dir=tmp_path)
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            view = _next_turn(ws, "player_0")
            ws.send_text(json.dumps({"type": "analyse"}))
            for _ in range(200):
                m = recv(ws)
                if m["type"] == "analysis":
                    break
            result = m["result"]
            assert m["decision_step"] == view["step"]
            assert set(result["values"]) <= {x["label"] for x in view["legal"]} and result["best"]
            assert set(result["best"]) <= set(result["values"]) and result["unit"] in ("tricks", "points")
            ws.send_text(json.dumps({"type": "review", "hand": 0}))  # the hand is not over: refused
            assert "not over" in _next_error(ws)["message"]
            ws.send_text(json.dumps({"type": "act", "action": view["legal"][0]["label"], "step": view["step"]}))
            _next_view(ws, lambda v: v["to_act"] != "player_0" or v["step"] > view["step"])
            ws.send_text(json.dumps({"type": "analyse"}))  # not its turn now (or a new decision)
            messages = play_seat(ws, "player_0")
            ws.send_text(json.dumps({"type": "review", "hand": 0}))
            for _ in range(200):
                m = recv(ws)
                messages.append(m)
                if m["type"] == "review":
                    break
    review = m["result"]
    record = record_of(host)
    assert hidden_cards(messages, record, "player_0") == []
    mine = [a for a in record["actions"] if a["agent"] == "player_0"]
    assert [d["step"] for d in review["double_dummy"]] == [a["step"] for a in mine]
    solved = [d for d in review["double_dummy"] if d["values"]]
    assert solved and all(d["best"] and set(d["best"]) <= set(d["values"]) for d in solved)
    assert all("tricks left" in d["note"] for d in review["double_dummy"] if not d["values"])


# ------------------------------------------------------------------ records
def test_a_server_stopped_mid_game_stores_the_completed_hands(tmp_path):
    host = make_host("classic_whist", default_seats("classic_whist"), episode="game", records_dir=tmp_path, target_score=30)
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            while not host.table.hands_done:
                view = _next_turn(ws, "player_0")
                ws.send_text(json.dumps({"type": "act", "action": view["legal"][0]["label"], "step": view["step"]}))
            assert not host.table.over
    records = read_records(host.table.record_path)
    assert len(records) == 1 and records[0]["meta"]["complete"] is False
    assert replay_record(records[0]).ok and len(records[0]["hands"]) == len(host.table.hands_done) >= 1
    page = tmp_path / "replay.html"
    assert cli.main(["replay", str(host.table.record_path), "--html", str(page)]) == 0
    assert Path(page).stat().st_size > 1000


def test_an_agent_that_fails_is_replaced_by_the_fallback_for_that_decision(tmp_path):
    class Broken:
        name = "broken"

        def act(self, observation, info_state=None):
            raise RuntimeError("out of cheese")

    host = make_host("german_whist", ["human", "heuristic"], records_dir=tmp_path)
    host.table.policies["player_1"] = Broken()
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            messages = play_seat(ws, "player_0")
    record = record_of(host)
    assert replay_record(record).ok
    failures = [t for t in record["meta"]["timeouts"] if t["agent"] == "player_1"]
    assert failures and all("out of cheese" in t["error"] for t in failures)
    assert len(failures) == sum(1 for a in record["actions"] if a["agent"] == "player_1")
    assert any("failed" in line["text"] for line in messages[-1]["view"]["log"])


def test_a_new_game_once_the_game_is_over(tmp_path):
    host = make_host("romanian_whist", default_seats("romanian_whist"), records_dir=tmp_path)
    with TestClient(create_app(host)) as client:
        with client.websocket_connect("/ws/player_0") as ws:
            play_seat(ws, "player_0")
            first = host.table.record_path
            ws.send_text(json.dumps({"type": "new_game"}))
            view = _next_view(ws, lambda v: v["game_number"] == 1)
            assert view["step"] == 0 and not view["done"] and view["log"][0]["text"].startswith("Game 2")
            play_seat(ws, "player_0")
    second = host.table.record_path
    assert first != second and all(replay_record(read_records(p)[0]).ok for p in (first, second))
    assert read_records(second)[0]["seed"] == read_records(first)[0]["seed"] + 1
