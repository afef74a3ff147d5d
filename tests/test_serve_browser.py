"""``whist serve`` in real headless Chromium (selenium): a whole hand of every game played through
the page by clicking the enabled cards and call buttons of the seat, uvicorn serving the table
on a free port in a background thread; every websocket message the page received is checked
for cards the seat could not see at that moment (the hidden-card check of tests/serve_helpers.py)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

pytest.importorskip("starlette", reason="whist serve needs the serve extra (starlette)")
uvicorn = pytest.importorskip("uvicorn", reason="whist serve needs the serve extra (uvicorn)")

from browser_helpers import headless_chromium  # noqa: E402
from serve_helpers import default_seats, hidden_cards, make_host  # noqa: E402

from training.viewers.serve.app import create_app  # noqa: E402
from whist_env import GAMES  # noqa: E402
from whist_env.records import read_records, replay_record  # noqa: E402

#: Run in the page before its own scripts: keep a copy of every websocket message it receives.
RECORD_MESSAGES = """
window.__received = [];
(function () {
  var Native = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    var ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    ws.addEventListener("message", function (e) { window.__received.push(e.data); });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  window.WebSocket.OPEN = Native.OPEN;
})();
"""


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("1400,1000", browser_log=True) as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_MESSAGES})
        yield driver


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """uvicorn serving ``app`` on a free port of 127.0.0.1 in a background thread."""

    def __init__(self, app) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(20)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def body_state(browser) -> dict:
    return browser.execute_script(
        "var b = document.body; return {step: +b.getAttribute('data-step'), turn: b.getAttribute('data-turn') === '1', "
        "done: b.getAttribute('data-done') === '1'};")


def wait_for(browser, predicate, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        state = body_state(browser)
        if predicate(state):
            return state
        assert time.monotonic() < deadline, f"the page did not get there: {state}"
        time.sleep(0.02)


ENABLED = "#hand button.act:not([disabled]), #actions button.act:not([disabled])"


def click_first_enabled(browser) -> str:
    """Click the seat's first enabled card or call; returns its label. The page redraws on every
    message, so a button found just before a redraw is found again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for _ in range(20):
        try:
            enabled = browser.find_elements(By.CSS_SELECTOR, ENABLED)
            assert enabled, "the seat's turn shows no enabled card or call"
            label = enabled[0].get_attribute("data-label")
            enabled[0].click()
            return label
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError("the page kept redrawing its buttons")


def play_hand_in_page(browser, server, agent: str = "player_0") -> int:
    """Click the seat's first enabled card or call until the game is over; returns the clicks."""

    browser.get(server.url(f"/seat/{agent}"))
    clicks = 0
    while True:
        state = wait_for(browser, lambda s: s["turn"] or s["done"])
        if state["done"]:
            return clicks
        labels = browser.execute_script(
            "var q = function (s) { return Array.prototype.map.call(document.querySelectorAll(s), function (b) { return b.getAttribute('data-label'); }); };"
            "return [q(arguments[0]), q('#hand button.card[disabled]'), q('#hand button.card')];", ENABLED)
        enabled, disabled, hand = (set(x) for x in labels)
        assert enabled and not enabled & disabled and enabled | disabled >= hand
        click_first_enabled(browser)
        clicks += 1
        wait_for(browser, lambda s, step=state["step"]: s["step"] > step)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_whole_hand_in_the_page_shows_no_hidden_card(browser, tmp_path, game):
    from selenium.webdriver.common.by import By

    host = make_host(game, default_seats(game), records_dir=tmp_path, seed=5)
    with Server(create_app(host)) as server:
        clicks = play_hand_in_page(browser, server)
        received = [json.loads(m) for m in browser.execute_script("return window.__received")]
        final_scores = json.loads(browser.find_element(By.ID, "score").get_attribute("data-scores"))
        final_text = browser.find_element(By.ID, "final-score").text
        log_text = browser.find_element(By.ID, "log").text
        board = browser.find_element(By.ID, "board").text
        browser.get("about:blank")  # leave before the server stops: a live page would log its reconnect failing
    record = read_records(host.table.record_path)[0]
    assert replay_record(record).ok and record["meta"]["timeouts"] == []
    assert clicks == sum(1 for a in record["actions"] if a["agent"] == "player_0") > 0
    assert final_scores == record["result"]["scores"] and "Final score" in final_text
    assert "Game over" in log_text and "player_0" in board
    assert received and hidden_cards(received, record, "player_0") == []
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors


def test_analysis_in_the_page_and_a_second_seat_in_another_tab(browser, tmp_path):
    """Two people at one Classic Whist table; player_0 turns analysis on: pimc's values appear
    beside its cards, and after the hand the review (double dummy, the zoo agent's network)."""
    from selenium.webdriver.common.by import By

    host = make_host("classic_whist", ["human", "zoo", "human", "heuristic"], records_dir=tmp_path, seed=2, worlds=4)
    with Server(create_app(host)) as server:
        browser.get(server.url("/seat/player_0"))
        wait_for(browser, lambda s: s["step"] >= 0)
        browser.find_element(By.ID, "analysis-toggle").click()
        first = browser.current_window_handle
        browser.switch_to.new_window("tab")
        second = browser.current_window_handle
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_MESSAGES})  # per tab
        browser.get(server.url("/seat/player_2"))
        windows = {"player_0": first, "player_2": second}
        seen_values = False
        while not body_state(browser)["done"]:
            for agent, handle in windows.items():
                browser.switch_to.window(handle)
                state = body_state(browser)
                if not state["turn"]:
                    continue
                if agent == "player_0":  # wait for pimc's analysis of the decision (values beside the cards)
                    deadline = time.monotonic() + 30
                    while "pimc" not in browser.find_element(By.ID, "analysis").text:
                        assert time.monotonic() < deadline, "no analysis shown"
                        time.sleep(0.05)
                    seen_values = seen_values or bool(browser.find_elements(By.CSS_SELECTOR, "#hand .value:not(:empty)"))
                click_first_enabled(browser)
                wait_for(browser, lambda s, step=state["step"]: s["step"] > step)
            time.sleep(0.02)
        browser.switch_to.window(first)
        wait_for(browser, lambda s: s["done"])
        deadline = time.monotonic() + 30
        while "Review of hand 1" not in browser.find_element(By.ID, "review").text:
            assert time.monotonic() < deadline, "no review shown"
            time.sleep(0.05)
        review = browser.find_element(By.ID, "review").text
        received = {}
        for agent, handle in windows.items():
            browser.switch_to.window(handle)
            received[agent] = [json.loads(m) for m in browser.execute_script("return window.__received")]
        browser.switch_to.window(second)
        browser.close()
        browser.switch_to.window(first)
    assert seen_values and "double dummy" in review and "network" in review
    record = read_records(host.table.record_path)[0]
    assert replay_record(record).ok and record["meta"]["timeouts"] == []
    for agent, messages in received.items():
        assert messages and hidden_cards(messages, record, agent) == []
