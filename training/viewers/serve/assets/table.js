/* The live table of `whist serve` for one seat: the seat's view arrives over a websocket
   (training/viewers/serve/host.py) and is drawn with WhistDraw (replay.js); the seat's legal
   cards and calls are buttons that send its move. The page holds nothing but what the server
   sent this seat. body data-step / data-game / data-turn / data-done follow the view. */
(function () {
  "use strict";
  var W = WhistDraw, esc = W.esc, fmt = W.fmt;
  var body = document.body, SEAT = body.getAttribute("data-seat"), TOKEN = body.getAttribute("data-token");
  var $ = function (id) { return document.getElementById(id); };
  var view = null, ws = null, analysis = null, review = null, deadlineAt = null, sent = false, retry = null;

  function socketUrl() {
    var proto = location.protocol === "https:" ? "wss:" : "ws:";
    return proto + "//" + location.host + "/ws/" + encodeURIComponent(SEAT) + (TOKEN ? "?token=" + encodeURIComponent(TOKEN) : "");
  }
  function send(message) {
    if (ws && ws.readyState === 1) { ws.send(JSON.stringify(message)); return true; }
    return false;
  }
  function connect() {
    ws = new WebSocket(socketUrl());
    ws.onopen = function () { $("connection").hidden = true; };
    ws.onmessage = function (event) { receive(JSON.parse(event.data)); };
    ws.onclose = function () {
      $("connection").hidden = false;
      $("connection").textContent = "Not connected to the table: reconnecting\u2026 (the table goes on; after its time limit your move is made for you)";
      clearTimeout(retry);
      retry = setTimeout(connect, 1500);
    };
  }
  function receive(msg) {
    if (msg.type === "view") {
      if (view && (msg.game !== view.game_number || msg.view.hand_number !== view.hand_number)) analysis = null;
      if (view && msg.game !== view.game_number) review = null;
      view = msg.view; sent = false;
      $("message").textContent = "";
      deadlineAt = view.deadline === null ? null : Date.now() + view.deadline * 1000;
      render();
    } else if (msg.type === "error") {
      sent = false;
      $("message").textContent = msg.message;
      if (view) render();
    } else if (msg.type === "analysis") {
      analysis = msg.decision_step === (view && view.step) ? msg.result : analysis;
      if (view) render();
    } else if (msg.type === "review") {
      review = msg.result;
      renderReview();
    }
  }

  function myTurn() { return view && view.to_act === SEAT && view.legal.length > 0; }
  function valueOf(label) {
    if (!analysis || !myTurn() || !(label in analysis.values)) return null;
    return {text: String(analysis.values[label]), best: analysis.best.indexOf(label) >= 0};
  }
  function legalByLabel() { var out = {}; (myTurn() ? view.legal : []).forEach(function (x) { out[x.label] = x; }); return out; }
  /* the seat's own hand: every card a button, enabled where it is a legal action now */
  function ownHand(st, a) {
    if (a !== SEAT) return W.handHtml(st, a);
    var cards = st.hands[a] || [];
    if (!cards.length) return '<div class="hand" id="hand"><span class="empty">no cards</span></div>';
    var legal = legalByLabel();
    return '<div class="hand" id="hand">' + W.suitGroups(cards).map(function (g) {
      return '<div class="suit">' + g.map(function (c) {
        var x = legal[c], v = valueOf(c);
        var button = '<button class="card' + (W.isRed(c) ? " red" : "") + (x ? " act" : "") + '" data-label="' + esc(c) + '"' +
          (x ? ' data-action="' + x.action + '"' : " disabled") + (sent ? " disabled" : "") + ' title="' + esc(c) + '">' + esc(W.cardFace(c)) + "</button>";
        return '<span class="cardcol">' + button + '<span class="value' + (v && v.best ? " best" : "") + '">' + (v ? esc(v.text) : "") + "</span></span>";
      }).join("") + "</div>";
    }).join("") + "</div>";
  }
  function boardState() {
    var st = Object.assign({}, view);
    st.hands = {}; st.hands[SEAT] = view.hand;
    st.next = null;
    var done = view.tricks.length ? view.tricks : view.done || view.truncated ? view.previous_tricks : [];
    if (!Object.keys(view.table.cards).length && done.length) {  // the trick just won, until the next card (the last one at the end)
      var t = done[done.length - 1];
      st.table = {cards: t.cards, leader: t.leader, winner: t.winner};
    }
    return st;
  }
  function caption() {
    if (view.done || view.truncated) {
      var w = view.winners || [];
      return "Game over" + (w.length ? ": " + w.join(", ") + (w.indexOf(SEAT) >= 0 ? " win \u2014 well played!" : " win.") : ".");
    }
    if (myTurn()) {
      var left = deadlineAt === null ? "" : " (" + Math.max(0, Math.round((deadlineAt - Date.now()) / 1000)) + " s left)";
      var cards = view.legal.some(function (x) { return x.card; }), calls = view.legal.some(function (x) { return !x.card; });
      return "Your turn" + left + ": " + (cards && calls ? "choose a card or a call" : cards ? "choose a card" : "choose a call") + ".";
    }
    return view.to_act + " (" + view.players[view.to_act] + ") to act.";
  }
  function renderCaption() {
    if (!view) return;
    $("caption").textContent = caption();
    $("caption").className = myTurn() ? "turn" : "";
  }
  function render() {
    var st = boardState();
    var posOf = W.positions(view.agents, view.agents.indexOf(SEAT));
    var players = {};
    view.agents.forEach(function (a) {
      var p = view.players[a];
      players[a] = a === SEAT ? "you" : p === "human" ? "human" + (view.connected[a] ? "" : " (away)") : p;
    });
    $("board").innerHTML = W.boardHtml(st, {agents: view.agents, players: players, posOf: posOf, hand: ownHand});
    var me = $("seat-" + SEAT); if (me) me.className += " me";
    $("facts").innerHTML = W.factsHtml(st);
    $("score").innerHTML = W.scoreHtml(st, view.sides);
    $("score").setAttribute("data-scores", JSON.stringify(view.score));
    var fin = $("final-score");
    if (view.done || view.truncated) {
      fin.hidden = false;
      fin.textContent = "Final score: " + view.sides.map(function (side) { return side.join(" + ") + " " + view.score[side[0]]; }).join(", ") +
        ((view.winners || []).length ? ". Winners: " + view.winners.join(", ") : "");
    } else { fin.hidden = true; }
    $("hands-done").innerHTML = view.hands_done.map(function (h) {
      return "<li>hand " + (h.hand_number + 1) + ": " + view.sides.map(function (side) { var p = h.points[side[0]]; return esc(side.join(" + ")) + " " + (p >= 0 ? "+" : "") + p; }).join(", ") + "</li>";
    }).join("");
    var shown = view.tricks.length ? view.tricks : view.previous_tricks;
    $("tricks-title").textContent = view.tricks.length || !shown.length ? "Tricks this hand" : "Tricks of the last hand";
    $("tricks").innerHTML = shown.length ? shown.map(function (t) { return W.trickHtml(t, view.agents); }).join("") : '<span class="empty">none yet</span>';
    $("log").innerHTML = view.log.map(function (line) {
      var lead = /^(Game|Hand) \d+/.test(line.text) ? ' class="hand-line"' : "";
      return "<div" + lead + ">" + fmt(line.text) + "</div>";
    }).join("");
    $("log").scrollTop = $("log").scrollHeight;
    var legal = myTurn() ? view.legal.filter(function (x) { return !x.card; }) : [];
    $("actions").innerHTML = legal.map(function (x) {
      var v = valueOf(x.label);
      return '<button class="act' + (v && v.best ? " best" : "") + '" data-label="' + esc(x.label) + '" data-action="' + x.action + '"' + (sent ? " disabled" : "") + ">" + esc(x.label) +
        (v ? '<span class="value">' + esc(v.text) + "</span>" : "") + "</button>";
    }).join("");
    var rules = W.rulesHtml(view.changed_options, view.rule_options);
    $("rules-summary").textContent = rules.summary; $("rules-all").innerHTML = rules.all;
    $("subtitle").textContent = "you are " + SEAT + (view.sides.length < view.agents.length ? " (partner: " + view.sides.filter(function (s) { return s.indexOf(SEAT) >= 0; })[0].filter(function (a) { return a !== SEAT; }).join(", ") + ")" : "") +
      " \u00b7 game " + (view.game_number + 1) + " \u00b7 hand " + (view.hand_number + 1);
    $("analysis-toggle").checked = !!view.analysis_on;
    $("analyse").disabled = !myTurn();
    $("review-last").disabled = !view.hands_done.length;
    $("new-game").hidden = !(view.done || view.truncated);
    renderAnalysis();
    renderCaption();
    body.setAttribute("data-step", String(view.step));
    body.setAttribute("data-game", String(view.game_number));
    body.setAttribute("data-turn", myTurn() && !sent ? "1" : "0");
    body.setAttribute("data-done", view.done || view.truncated ? "1" : "0");
  }
  function renderAnalysis() {
    if (!analysis || !myTurn()) { $("analysis").innerHTML = ""; return; }
    var labels = Object.keys(analysis.values);
    $("analysis").innerHTML = "<div><b>pimc</b> (" + analysis.worlds + " worlds, " + analysis.seconds + " s)" +
      (labels.length ? ", " + esc(analysis.unit) + ": " + labels.map(function (l) {
        return (analysis.best.indexOf(l) >= 0 ? "<b>" : "") + fmt(l) + " " + esc(analysis.values[l]) + (analysis.best.indexOf(l) >= 0 ? "</b>" : "");
      }).join(" \u00b7 ") : "") + '</div><div class="note">' + esc(analysis.note) + "</div>";
  }
  function renderReview() {
    if (!review) { $("review").innerHTML = ""; return; }
    var h = "<div><b>Review of hand " + (review.hand_number + 1) + "</b> (" + review.seconds + " s)</div>";
    review.double_dummy.forEach(function (d) {
      var values = Object.keys(d.values).map(function (l) {
        var best = d.best.indexOf(l) >= 0;
        return (best ? '<span class="best">' : "") + fmt(l) + " " + d.values[l] + (best ? "</span>" : "");
      }).join(" ");
      h += '<div class="decision">trick ' + d.trick + ": you played " + fmt(d.played) + (values ? " \u2014 double dummy: " + values : ' <span class="note">' + esc(d.note) + "</span>") + "</div>";
    });
    review.network.forEach(function (d) {
      var probs = Object.keys(d.probabilities).slice(0, 6).map(function (l) { return fmt(l) + " " + Math.round(100 * d.probabilities[l]) + "%"; }).join(" ");
      h += '<div class="decision">' + esc(d.agent) + " (" + esc(d.spec) + ") played " + fmt(d.played) + " \u2014 network: " + probs +
        (d.exact_open_play && d.phase === "play" ? ' <span class="note">(this agent plays its open phase exactly, not by the network)</span>' : "") + "</div>";
    });
    review.notes.forEach(function (n) { h += '<div class="note">' + esc(n) + "</div>"; });
    $("review").innerHTML = h;
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest("button.act") : null;
    if (!b || b.disabled || !myTurn() || sent) return;
    if (send({type: "act", action: b.getAttribute("data-label"), step: view.step})) {
      sent = true;
      body.setAttribute("data-turn", "0");
      Array.prototype.forEach.call(document.querySelectorAll("button.act"), function (x) { x.disabled = true; });
    }
  });
  $("analysis-toggle").addEventListener("change", function () { send({type: "analysis", on: this.checked}); });
  $("analyse").addEventListener("click", function () { send({type: "analyse"}); $("analysis").innerHTML = '<div class="note">pimc is thinking\u2026</div>'; });
  $("review-last").addEventListener("click", function () {
    if (view && view.hands_done.length) { send({type: "review", hand: view.hands_done[view.hands_done.length - 1].hand_number}); $("review").innerHTML = '<div class="note">solving\u2026</div>'; }
  });
  $("new-game").addEventListener("click", function () { send({type: "new_game"}); });
  setInterval(renderCaption, 1000);
  connect();
})();
