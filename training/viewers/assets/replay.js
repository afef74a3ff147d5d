/* The drawing of a Whist table (WhistDraw: cards, seats, the trick, facts, score), shared by the
   replay page (below, run when the page holds its data) and the live table of `whist serve`
   (training/viewers/serve/assets/table.js, which loads this file first). */
var WhistDraw = (function () {
  "use strict";
  var SYM = {S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663"};
  var POS = {2: ["S", "N"], 3: ["S", "W", "E"], 4: ["S", "W", "N", "E"], 5: ["S", "W", "NW", "NE", "E"], 6: ["S", "W", "NW", "N", "NE", "E"]};
  var SLOT = {S: [50, 80], N: [50, 20], W: [18, 50], E: [82, 50], NW: [28, 24], NE: [72, 24], SW: [28, 76], SE: [72, 76]};
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]; }); }
  function isRed(c) { return c === "JKR" || /[HD]$/.test(c); }
  function cardFace(c) {
    if (c === "JKR" || c === "JKB") return "Jk\u2605";
    var r = c.slice(0, -1); return (r === "T" ? "10" : r) + SYM[c.slice(-1)];
  }
  function card(c, extra) { return '<span class="card' + (isRed(c) ? " red" : "") + (extra ? " " + extra : "") + '" title="' + esc(c) + '">' + esc(cardFace(c)) + "</span>"; }
  function fmt(text) {
    return esc(text).replace(/\b(10|[2-9TJQKA])([CDHS])\b|\bJK[RB]\b/g, function (m) {
      var c = m.indexOf("10") === 0 ? "T" + m.slice(2) : m;
      return '<span class="inline-card' + (isRed(c) ? " red" : "") + '">' + esc(cardFace(c)) + "</span>";
    });
  }
  /* agent -> position on the board (S, W, N, E ...), the agent `south` at the bottom */
  function positions(agents, south) {
    var n = agents.length, posOf = {};
    agents.forEach(function (a, i) { posOf[a] = (POS[n] || POS[4])[(i - south + n) % n] || "S"; });
    return posOf;
  }
  /* cards grouped by suit (a list of lists), in the order given */
  function suitGroups(cards) {
    var groups = [], last = null;
    cards.forEach(function (c) { var s = c.indexOf("JK") === 0 ? "J" : c.slice(-1); if (s !== last) { groups.push([]); last = s; } groups[groups.length - 1].push(c); });
    return groups;
  }
  function handHtml(st, a) {
    var cards = st.hands[a];
    if (!cards) {
      var n = st.counts[a], h = "";
      for (var i = 0; i < n; i++) h += '<span class="card back"></span>';
      return '<div class="hand"><div class="suit">' + (h || '<span class="empty">no cards</span>') + "</div>" + (n ? '<span class="empty" style="margin-left:10px">' + n + " cards</span>" : "") + "</div>";
    }
    if (!cards.length) return '<div class="hand"><span class="empty">no cards</span></div>';
    var nxt = st.next && st.next.agent === a ? st.next.label : null;
    return '<div class="hand">' + suitGroups(cards).map(function (g) { return '<div class="suit">' + g.map(function (c) { return card(c, c === nxt ? "next" : ""); }).join("") + "</div>"; }).join("") + "</div>";
  }
  /* The board's HTML: a box per seat and the trick in the middle. ctx: {agents, players, posOf,
     hand: optional function (st, agent) -> HTML of that seat's hand (default: handHtml)} */
  function boardHtml(st, ctx) {
    var h = "", hand = ctx.hand || handHtml;
    ctx.agents.forEach(function (a) {
      var tags = "";
      if (st.dealer === a) tags += '<span class="tag dealer" title="dealer">D</span>';
      tags += '<span class="tag tricks" title="tricks won this hand">' + st.tricks_won[a] + " tricks</span>";
      if (st.to_act === a) tags += '<span class="tag act">to act</span>';
      var facts = (st.agent_facts[a] || []).concat(st.private[a] || []);
      var fh = facts.length ? '<div class="facts">' + facts.map(function (f) { return esc(f[0]) + ": <b>" + fmt(f[1]) + "</b>"; }).join(" &middot; ") + "</div>" : "";
      var nxt = st.next && st.next.agent === a && !(st.hands[a] || []).includes(st.next.label) ? '<div class="facts">next: <b>' + fmt(st.next.label) + "</b></div>" : "";
      h += '<div class="seat pos-' + ctx.posOf[a] + (st.to_act === a ? " to-act" : "") + '" id="seat-' + a + '"><div class="name">' + esc(a) +
        ' <span class="label">' + esc(ctx.players[a]) + "</span>" + tags + "</div>" + fh + nxt + hand(st, a) + "</div>";
    });
    var t = '<div id="table">';
    var tr = st.table || {cards: {}};
    Object.keys(tr.cards).forEach(function (a) {
      var p = SLOT[ctx.posOf[a]];
      t += '<div class="slot' + (tr.winner === a ? " winner" : "") + '" style="left:' + p[0] + "%;top:" + p[1] + '%">' + card(tr.cards[a]) +
        '<div class="who">' + esc(a) + (tr.leader === a ? " (led)" : "") + "</div></div>";
    });
    var trump = st.trump ? '<div class="trump' + (isRed(st.trump) ? " red" : "") + '">' + SYM[st.trump] + "</div>trump<br>"
      : st.trump_pending ? "" : '<div class="trump">&ndash;</div>no trump<br>';
    if (!Object.keys(tr.cards).length) t += '<div class="center" id="centre">' + trump + '<span style="opacity:.8">' + esc(st.phase) + "</span></div>";
    else if (tr.winner) t += '<div class="center" style="top:50%"><b>' + esc(tr.winner) + "</b><br>wins</div>";
    t += "</div>";
    return h + t;
  }
  /* The hand's facts as <dt>/<dd> pairs: hand, phase, dealer, trump, then the game's own. */
  function factsHtml(st) {
    var f = [["hand", (st.hand_number + 1) + (st.game_number ? " (game " + (st.game_number + 1) + ")" : "")], ["phase", st.phase], ["dealer", st.dealer],
      ["trump", st.trump ? st.trump : st.trump_pending ? "not named yet" : "none"]];
    f = f.concat(st.facts);
    return f.map(function (x) {
      var v = x[0] === "trump" && st.trump ? '<span class="inline-card' + (isRed(st.trump) ? " red" : "") + '">' + SYM[st.trump] + "</span>" : fmt(x[1]);
      return "<dt>" + esc(x[0]) + "</dt><dd>" + v + "</dd>";
    }).join("");
  }
  /* The score table: a row per side (tricks this hand, points of the hand, score). */
  function scoreHtml(st, sides) {
    var rows = sides.map(function (side, k) {
      var a = side[0], tricks = side.reduce(function (s, b) { return s + st.tricks_won[b]; }, 0);
      var hp = st.hand_points ? (st.hand_points[a] >= 0 ? "+" : "") + st.hand_points[a] : "";
      var extra = st.side_facts.map(function (x) { return x[0] + " " + x[1].split(" / ")[k]; }).join(", ");
      return '<tr><td>' + esc(side.join(" + ")) + (extra ? ' <span class="label">' + esc(extra) + "</span>" : "") + '</td><td class="num">' + tricks + '</td><td class="num">' + hp +
        '</td><td class="num score-value" data-side="' + k + '">' + st.score[a] + "</td></tr>";
    }).join("");
    return "<table><tr><th>side</th><th>tricks</th><th>hand</th><th style='text-align:right'>score</th></tr>" + rows + "</table>";
  }
  /* One completed trick as a list item: its cards in the order played, and its winner. */
  function trickHtml(t, agents) {
    var order = [], k = agents.indexOf(t.leader), n = agents.length;
    for (var j = 0; j < n; j++) { var a = agents[(k + j) % n]; if (t.cards[a]) order.push(t.cards[a]); }
    return "<li>" + order.map(function (c) { return fmt(c); }).join(" ") + ' <span class="w">&rarr; ' + esc(t.winner) + "</span></li>";
  }
  function optText(v) { return Array.isArray(v) ? v.join(" ") : v === null ? "none" : String(v); }
  /* The header's rule options: a summary of those that differ from the defaults, and every one. */
  function rulesHtml(changedOptions, ruleOptions) {
    var changed = Object.keys(changedOptions || {});
    var summary = changed.length ? "rules: " + changed.map(function (k) { return k + "=" + optText(changedOptions[k]); }).join(", ") : "rules: the game's defaults";
    var all = Object.keys(ruleOptions || {}).map(function (k) { return "<div>" + esc(k) + " = <b>" + esc(optText(ruleOptions[k])) + "</b></div>"; }).join("");
    return {summary: summary, all: all};
  }
  return {SYM: SYM, esc: esc, isRed: isRed, cardFace: cardFace, card: card, fmt: fmt, positions: positions, suitGroups: suitGroups,
    handHtml: handHtml, boardHtml: boardHtml, factsHtml: factsHtml, scoreHtml: scoreHtml, trickHtml: trickHtml, rulesHtml: rulesHtml};
})();

(function () {
  "use strict";
  var dataNode = document.getElementById("data");
  if (!dataNode) return;  // loaded by another page for WhistDraw alone
  var W = WhistDraw;
  var DATA = JSON.parse(dataNode.textContent);
  var S = DATA.states, AG = DATA.agents;
  var posOf = W.positions(AG, DATA.viewer ? AG.indexOf(DATA.viewer) : 0);
  var ctx = {agents: AG, players: DATA.players, posOf: posOf};
  var cur = 0;
  var $ = function (id) { return document.getElementById(id); };
  var esc = W.esc, fmt = W.fmt;
  function renderPanel(st, i) {
    $("facts").innerHTML = W.factsHtml(st);
    $("score").innerHTML = W.scoreHtml(st, DATA.sides);
    $("score").setAttribute("data-scores", JSON.stringify(st.score));
    var fin = $("final-score");
    if (i === S.length - 1) {
      var txt = "Final score: " + DATA.sides.map(function (side) { return side.join(" + ") + " " + st.score[side[0]]; }).join(", ");
      if (DATA.result.winners.length) txt += ". Winners: " + DATA.result.winners.join(", ");
      else if (DATA.result.truncated) txt += " (truncated)";
      fin.textContent = txt; fin.hidden = false; fin.setAttribute("data-scores", JSON.stringify(st.score));
    } else { fin.hidden = true; fin.textContent = ""; }
    var tricks = (DATA.tricks[String(st.hand_number)] || []).slice(0, st.tricks_done);
    $("tricks").innerHTML = tricks.length ? tricks.map(function (t) { return W.trickHtml(t, AG); }).join("") : '<span class="empty">none yet</span>';
    var start = i; while (start > 0 && S[start].kind !== "deal") start--;
    var log = [];
    for (var j = start; j <= i; j++) if (S[j].action) log.push('<span' + (j === i ? ' class="cur"' : "") + ">" + esc(S[j].action.agent.replace("player_", "P")) + ": " + fmt(S[j].action.label) + "</span>");
    $("log").innerHTML = log.length ? log.join(" &middot; ") : '<span class="empty">none yet</span>';
    var box = $("log"), cl = box.querySelector(".cur");
    box.scrollTop = cl ? Math.max(0, cl.offsetTop - box.clientHeight / 2) : 0;
  }
  function show(i) {
    cur = Math.max(0, Math.min(S.length - 1, i));
    var st = S[cur];
    $("board").innerHTML = W.boardHtml(st, ctx);
    renderPanel(st, cur);
    $("caption").innerHTML = fmt(st.caption);
    $("step").textContent = cur + " / " + (S.length - 1);
    $("step").setAttribute("data-step", String(cur));
    $("slider").value = String(cur);
    $("prev").disabled = $("first").disabled = $("prev-trick").disabled = cur === 0;
    $("next").disabled = $("last").disabled = $("next-trick").disabled = cur === S.length - 1;
  }
  function nextStop(i) { for (var j = i + 1; j < S.length; j++) if (S[j].stop) return j; return S.length - 1; }
  function prevStop(i) { for (var j = i - 1; j > 0; j--) if (S[j].stop) return j; return 0; }
  $("next").onclick = function () { show(cur + 1); };
  $("prev").onclick = function () { show(cur - 1); };
  $("first").onclick = function () { show(0); };
  $("last").onclick = function () { show(S.length - 1); };
  $("next-trick").onclick = function () { show(nextStop(cur)); };
  $("prev-trick").onclick = function () { show(prevStop(cur)); };
  $("slider").max = String(S.length - 1);
  $("slider").oninput = function () { show(parseInt(this.value, 10)); };
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "range") return;
    var k = e.key, handled = true;
    if (k === "ArrowRight") show(e.shiftKey ? nextStop(cur) : cur + 1);
    else if (k === "ArrowLeft") show(e.shiftKey ? prevStop(cur) : cur - 1);
    else if (k === "ArrowDown" || k === "PageDown") show(nextStop(cur));
    else if (k === "ArrowUp" || k === "PageUp") show(prevStop(cur));
    else if (k === "Home") show(0);
    else if (k === "End") show(S.length - 1);
    else handled = false;
    if (handled) e.preventDefault();
  });
  var rules = W.rulesHtml(DATA.changed_options, DATA.rule_options);
  $("rules-summary").textContent = rules.summary;
  $("rules-all").innerHTML = rules.all;
  var sub = [];
  if (DATA.meta && DATA.meta.match) sub.push(DATA.meta.match + (DATA.meta.deal_index !== undefined ? ", deal " + (DATA.meta.deal_index + 1) : ""));
  if (DATA.viewer) sub.push("viewer: " + DATA.viewer + " (other hands hidden)");
  $("subtitle").textContent = sub.join(" \u00b7 ");
  $("subtitle").hidden = !sub.length;
  if (!DATA.replay.ok) { $("mismatch").hidden = false; $("mismatch").textContent = "This record does not replay exactly: " + DATA.replay.message; }
  show(0);
})();
