"""``whist replay`` (training/viewers/replay.py): the page's content, and the page in real headless
Chromium (selenium): step to the end with the → key and the next button, compare the final
score with the record's result, take a screenshot."""

from __future__ import annotations

import json
import re

import pytest
from browser_helpers import headless_chromium

from agents.random_agent import RandomAgent
from training import cli
from training.viewers.replay import build_page_data, render_html
from whist_env import GAMES
from whist_env.records import record_episode, write_records


def _record(game: str, seed: int = 6, episode: str = "hand") -> dict:
    env = GAMES[game].raw_env()
    policies = {a: RandomAgent(seed=seed + i) for i, a in enumerate(env.possible_agents)}
    return record_episode(GAMES[game], game, {"episode": episode}, seed, None, policies)


def _embedded(html: str) -> dict:
    match = re.search(r'<script id="data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_page_states_follow_the_record(game):
    record = _record(game)
    data = build_page_data(record)
    states = data["states"]
    assert data["replay"]["ok"]
    assert len(states) == len(record["actions"]) + 1  # one hand: the deal, then one state per action
    assert states[-1]["score"] == record["result"]["scores"] == data["result"]["scores"]
    assert [s["action"]["label"] for s in states[1:]] == [a["label"] for a in record["actions"]]
    assert sum(s["table"]["winner"] is not None for s in states) == len(record["hands"][0]["tricks"])
    first_hands = {a: sorted(c) for a, c in states[0]["hands"].items()}
    assert first_hands == {a: sorted(c) for a, c in record["hands"][0]["deal"]["hands"].items()}
    html = render_html(data)
    assert _embedded(html)["states"][-1]["score"] == record["result"]["scores"]
    assert "http://" not in html and "https://" not in html and "@import" not in html and "<link" not in html


def test_viewer_page_holds_no_hidden_cards():
    record = _record("classic_whist")
    data = build_page_data(record, viewer="player_2")
    own = set(record["hands"][0]["deal"]["hands"]["player_2"])
    for state in data["states"]:
        assert set(state["hands"]) == {"player_2"}
        assert set(state["hands"]["player_2"]) <= own
        if state["next"]:
            assert state["next"]["agent"] == "player_2"
    with pytest.raises(ValueError, match="unknown viewer"):
        build_page_data(record, viewer="player_9")


def test_whole_game_page_has_hand_end_and_deal_states():
    record = _record("classic_whist", seed=3, episode="game")
    data = build_page_data(record)
    kinds = [s["kind"] for s in data["states"]]
    hands = len(record["hands"])
    assert kinds.count("deal") == hands and kinds.count("hand_end") == hands
    assert len(kinds) == len(record["actions"]) + hands
    ends = [s for s in data["states"] if s["kind"] == "hand_end"]
    assert [s["score"] for s in ends] == [h["scores"] for h in record["hands"]]
    assert [s["hand_points"] for s in ends] == [h["points"] for h in record["hands"]]


def test_cli_errors(tmp_path, capsys):
    path = write_records([_record("german_whist")], tmp_path / "g.jsonl")
    assert cli.main(["replay", str(path), "--index", "3", "--html", str(tmp_path / "x.html")]) == 2
    assert "out of range" in capsys.readouterr().err
    assert cli.main(["replay", str(tmp_path / "missing.jsonl"), "--html", str(tmp_path / "x.html")]) == 2
    assert cli.main(["replay", str(path), "--viewer", "nobody", "--html", str(tmp_path / "x.html")]) == 2
    assert not (tmp_path / "x.html").exists()


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("1400,900") as driver:
        yield driver


def test_page_in_headless_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    record = _record("romanian_whist", seed=2, episode="hand")  # bids, a turn-up, tricks
    while len(record["actions"]) < 20:  # a deal of at least four cards each
        record = _record("romanian_whist", seed=record["seed"] + 1, episode="hand")
    path = write_records([record], tmp_path / "game.jsonl")
    page = tmp_path / "replay.html"
    assert cli.main(["replay", str(path), "--html", str(page)]) == 0
    browser.get(page.resolve().as_uri())
    total = len(record["actions"])
    assert browser.find_element(By.ID, "step").text == f"0 / {total}"
    assert browser.find_element(By.ID, "prev").get_attribute("disabled") is not None
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert browser.find_element(By.ID, "step").get_attribute("data-step") == "2"
    body.send_keys(Keys.ARROW_LEFT)
    assert browser.find_element(By.ID, "step").get_attribute("data-step") == "1"
    next_button = browser.find_element(By.ID, "next")
    clicks = 0
    while next_button.get_attribute("disabled") is None:
        next_button.click()
        clicks += 1
        assert clicks <= total
    assert browser.find_element(By.ID, "step").text == f"{total} / {total}"
    shown = json.loads(browser.find_element(By.ID, "score").get_attribute("data-scores"))
    assert shown == record["result"]["scores"]
    values = [int(e.text) for e in browser.find_elements(By.CSS_SELECTOR, "#score .score-value")]
    assert values == [record["result"]["scores"][a] for a in GAMES["romanian_whist"].raw_env().possible_agents]
    final = browser.find_element(By.ID, "final-score")
    assert final.is_displayed() and "Final score" in final.text
    assert json.loads(final.get_attribute("data-scores")) == record["result"]["scores"]
    assert browser.find_elements(By.CSS_SELECTOR, ".card.red"), "red suits are coloured"
    body.send_keys(Keys.HOME)
    assert browser.find_element(By.ID, "step").get_attribute("data-step") == "0"
    body.send_keys(Keys.ARROW_DOWN)  # next trick-by-trick stop: the end of the bidding
    assert int(browser.find_element(By.ID, "step").get_attribute("data-step")) == 4
    body.send_keys(Keys.END)
    assert browser.find_element(By.ID, "step").get_attribute("data-step") == str(total)
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors
    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


@pytest.mark.parametrize("game", sorted(GAMES))
def test_rule_options_are_shown_once_not_per_seat(game):
    record = _record(game)
    data = build_page_data(record)
    env = GAMES[game].raw_env(episode="hand")
    env.reset(seed=0)
    assert data["rule_options"].keys() == dict(env.information_state(env.possible_agents[0])["options"]).keys()
    assert data["changed_options"] == {"episode": "hand"}  # only what differs from the defaults
    for state in data["states"]:
        labels = [label for facts in (*state["private"].values(), *state["agent_facts"].values(), state["facts"]) for label, _ in facts]
        assert "options" not in labels, labels
    html = render_html(data)
    assert 'id="rules"' in html and "{'reward'" not in html


@pytest.mark.parametrize("game", ["classic_whist", "bid_whist"])
def test_every_hand_is_visible_at_1280x900(browser, tmp_path, game):
    """A laptop-sized window shows the whole table, player_0's hand (at the bottom) included."""
    from selenium.webdriver.common.by import By

    record = _record(game, episode="game")
    page = tmp_path / "replay.html"
    page.write_text(render_html(build_page_data(record)), encoding="utf-8")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        browser.get(page.resolve().as_uri())
        for step in (0, 6, 12):
            browser.execute_script("var s = document.getElementById('slider'); s.value = arguments[0]; s.oninput.call(s);", str(step))
            footer_top = browser.execute_script("return document.querySelector('footer').getBoundingClientRect().top")
            assert footer_top <= 900
            for agent in GAMES[game].raw_env().possible_agents:
                hand = browser.find_element(By.CSS_SELECTOR, f"#seat-{agent} .hand")
                bottom = browser.execute_script("return arguments[0].getBoundingClientRect().bottom", hand)
                assert bottom <= footer_top, f"step {step}: {agent}'s hand ends at {bottom}px, below the fold ({footer_top}px)"
        assert "options:" not in browser.find_element(By.ID, "board").text
        browser.save_screenshot(str(tmp_path / f"{game}.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# ------------------------------------------------------------------------------ exit status and cosmetics
@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda r: r.pop("actions"), "no 'actions' field"),
        (lambda r: r.__setitem__("actions", "KH"), "field 'actions'"),
        (lambda r: r["actions"][3].pop("agent"), "actions[3] has no 'agent'"),
        (lambda r: r["hands"][0].__setitem__("tricks", None), "hands[0] field 'tricks'"),
        (lambda r: r.__setitem__("version", 7), "version"),
    ],
)
def test_malformed_record_is_an_error_and_writes_no_page(tmp_path, capsys, damage, message):
    record = _record("classic_whist")
    damage(record)
    path = write_records([record], tmp_path / "bad.jsonl")
    page = tmp_path / "bad.html"
    assert cli.main(["replay", str(path), "--html", str(page)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("whist replay: error: ") and message in err
    assert not page.exists()


@pytest.mark.parametrize("tamper", ["action", "deal", "result"])
def test_record_that_does_not_replay_writes_the_page_and_exits_1(tmp_path, capsys, tamper):
    record = _record("classic_whist")
    if tamper == "action":  # another legal-looking card at step 5
        entry = record["actions"][5]
        entry["action"], entry["label"] = (entry["action"] + 1) % 52, "XX"
        expected = "first differing step 5"
    elif tamper == "deal":
        hands = record["reset_options"]["hands"] if record.get("reset_options") else record["hands"][0]["deal"]["hands"]
        a, b = list(hands)[:2]
        hands[a][0], hands[b][0] = hands[b][0], hands[a][0]
        expected = "first differing step 0"
    else:
        record["result"]["scores"]["player_0"] += 1
        expected = f"first differing step {len(record['actions'])}"
    path = write_records([record], tmp_path / "t.jsonl")
    page = tmp_path / "t.html"
    assert cli.main(["replay", str(path), "--html", str(page)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("whist replay: error: the record does not replay") and expected in err
    html = page.read_text(encoding="utf-8")
    assert 'id="mismatch"' in html and _embedded(html)["replay"]["ok"] is False


def test_deal_and_hand_are_numbered_from_1_everywhere(browser, tmp_path):
    from selenium.webdriver.common.by import By

    path = tmp_path / "rec"
    assert cli.main(["eval", "--game", "classic_whist", "--agents", "heuristic", "random", "--deals", "1", "--quiet",
                     "--records", str(path)]) == 0
    page = tmp_path / "first.html"
    assert cli.main(["replay", str(next(path.glob("*.jsonl"))), "--html", str(page)]) == 0
    browser.get(page.resolve().as_uri())
    assert "deal 1" in browser.find_element(By.ID, "subtitle").text
    assert "deal 0" not in browser.find_element(By.ID, "subtitle").text
    facts = browser.find_element(By.ID, "facts").text
    assert "hand\n1" in facts or "hand 1" in facts


def test_bid_whist_auction_shows_no_trump_indicator_and_books_stay_on_one_line(browser, tmp_path):
    from selenium.webdriver.common.by import By

    record = _record("bid_whist", seed=3)
    data = build_page_data(record)
    auction = [i for i, st in enumerate(data["states"]) if st["phase"] == "auction"]
    play = [i for i, st in enumerate(data["states"]) if st["phase"] in GAMES["bid_whist"].raw_env().game.CARD_PLAY_PHASES]
    assert auction and all(data["states"][i]["trump_pending"] for i in auction)
    assert play and not any(data["states"][i]["trump_pending"] for i in play)
    page = tmp_path / "bid.html"
    page.write_text(render_html(data), encoding="utf-8")
    browser.get(page.resolve().as_uri())
    browser.execute_script("var s = document.getElementById('slider'); s.value = arguments[0]; s.oninput.call(s);", str(auction[0]))
    centre = browser.find_element(By.ID, "centre").text
    assert "trump" not in centre.lower() and "auction" in centre
    assert "not named yet" in browser.find_element(By.ID, "facts").text
    labels = browser.find_elements(By.CSS_SELECTOR, "#score .label")
    assert labels and any("books" in e.text for e in labels)
    for e in labels:
        assert browser.execute_script("return arguments[0].getClientRects().length", e) == 1, e.text
