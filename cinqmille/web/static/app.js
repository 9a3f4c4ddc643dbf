// The score sheet page: keeps the game in localStorage, asks the server (/api/) to referee and advise.
"use strict";
(function () {
  const KEY = "cinqmille.sheet.v1";
  const $ = (id) => document.getElementById(id);
  let game = null;      // {rules: spec, players: [names], entries: [...]}
  let ruleset = null;   // the resolved ruleset (to_dict) of the game
  let sheet = null;     // the server's answer for the entries
  let presets = [];

  async function api(method, path, body) {
    const init = {method, headers: {"Content-Type": "application/json"}};
    if (body !== undefined) init.body = JSON.stringify(body);
    let response;
    try { response = await fetch(path, init); }
    catch (e) { return {status: 0, data: {error: "the server cannot be reached"}}; }
    let data;
    try { data = await response.json(); } catch (e) { data = {error: "the server sent no JSON"}; }
    return {status: response.status, data};
  }

  function save() {
    if (game) localStorage.setItem(KEY, JSON.stringify(game)); else localStorage.removeItem(KEY);
  }

  function load() {
    try {
      const g = JSON.parse(localStorage.getItem(KEY) || "null");
      if (g && Array.isArray(g.players) && Array.isArray(g.entries)) {
        if (!Array.isArray(g.questions)) g.questions = [];
        return g;
      }
    } catch (e) { /* a damaged entry starts a new game */ }
    return null;
  }

  // -- setup ---------------------------------------------------------------------------
  let uploaded = null;  // {toml, name}

  function nameInputs() { return Array.from($("names").querySelectorAll("input")); }

  function addName(value) {
    const inputs = nameInputs();
    if (inputs.length >= 8) return;
    const input = document.createElement("input");
    input.id = "name-" + (inputs.length + 1);
    input.maxLength = 40;
    input.value = value || "Player " + (inputs.length + 1);
    input.setAttribute("aria-label", "player " + (inputs.length + 1));
    $("names").appendChild(input);
  }

  async function showSetup() {
    $("game").hidden = true;
    $("setup").hidden = false;
    if (!presets.length) {
      const {data} = await api("GET", "/api/rules");
      presets = data.presets || [];
      const select = $("rules");
      select.innerHTML = "";
      for (const p of presets) {
        const option = document.createElement("option");
        option.value = p.name;
        option.textContent = p.name;
        select.appendChild(option);
      }
      if (typeof data.default === "string") select.value = data.default;
      else if (data.default) { uploaded = {toml: data.default.toml, name: data.default_name}; }
    }
    await showUploaded();
    if (!nameInputs().length) { addName(); addName(); }
    nameInputs()[0].focus();
  }

  // Start solving the table the game will read while the names are typed (the server solves one table at a time
  // in the background; a table at hand or already being solved is left as it is). Asked once the choice has
  // rested for PREPARE_AFTER ms, so that the rules and counts passed through on the way are not solved.
  const PREPARE_AFTER = 1500;
  let prepareTimer = null;

  function prepare() {
    clearTimeout(prepareTimer);
    prepareTimer = setTimeout(() => {
      prepareTimer = null;
      const rules = uploaded ? {toml: uploaded.toml} : $("rules").value;
      if (rules && !$("setup").hidden) api("POST", "/api/prepare", {rules, count: nameInputs().length});
    }, PREPARE_AFTER);
  }

  // The ruleset's description and key rules (words of the server: cinqmille/web/card.py) into `box`.
  function describeRules(box, info, lead) {
    box.innerHTML = "";
    const p = document.createElement("p");
    p.textContent = (lead || "") + (info.description || "");
    box.appendChild(p);
    const list = document.createElement("ul");
    for (const k of info.key_rules || []) {
      const li = document.createElement("li");
      li.textContent = k.text;
      li.dataset.topic = k.topic;
      list.appendChild(li);
    }
    box.appendChild(list);
  }

  async function showUploaded() {
    const spec = uploaded ? {toml: uploaded.toml} : $("rules").value;
    if (!spec) return;
    const {status, data} = await api("POST", "/api/rules", {rules: spec});
    if (status !== 200) { $("rules-info").textContent = data.error; return; }
    describeRules($("rules-info"), data, uploaded ? "Using the rules file '" + uploaded.name + "'. " : "");
  }

  async function startGame(event) {
    event.preventDefault();
    clearTimeout(prepareTimer);  // the game's own request starts its table
    const players = nameInputs().map((i) => i.value.trim());
    const rules = uploaded ? {toml: uploaded.toml} : $("rules").value;
    const candidate = {rules, players, entries: [], questions: []};
    const {status, data} = await api("POST", "/api/sheet", candidate);
    if (status !== 200) { $("setup-error").textContent = data.error; return; }
    game = candidate;
    save();
    await openGame();
  }

  // -- the game ------------------------------------------------------------------------
  async function openGame() {
    const r = await api("POST", "/api/rules", {rules: game.rules});
    if (r.status !== 200) { game = null; save(); $("setup-error").textContent = r.data.error; return showSetup(); }
    ruleset = r.data.rules;
    showRulesCard(r.data);
    const s = await api("POST", "/api/sheet", game);
    if (s.status !== 200) {  // a stored game that the rules refuse now: keep what they accept
      if (s.status !== 422 || !game.entries.length) { game = null; save(); $("setup-error").textContent = s.data.error; return showSetup(); }
      game.entries = game.entries.slice(0, s.data.entry || 0);
      game.questions = game.questions.filter((q) => q.entry <= game.entries.length);
      save();
      return openGame();
    }
    $("setup").hidden = true;
    $("game").hidden = false;
    $("taken-label").hidden = !ruleset.take_over;
    $("bank-dice-label").hidden = !ruleset.take_over;
    $("all-dice-label").hidden = !ruleset.bust_strikes_last_score;
    $("win-row").hidden = ruleset.five_ones !== "win";
    askWin(false);
    renderFaces();
    show(s.data);
    restoreAdviceFields();
    showJoin();
    $("points").focus();
  }

  function showRulesCard(info) {
    $("rules-name").textContent = info.name;
    $("rules-link").textContent = info.name;
    $("rules-description").textContent = info.description || "";
    describeRules($("key-rules"), {key_rules: info.key_rules});
    $("rules-toml").textContent = info.toml || "";
  }

  let joinShown = false;
  async function showJoin() {
    if (joinShown) return;
    const {status, data} = await api("GET", "/api/join");
    if (status !== 200 || !data.url) return;
    joinShown = true;
    $("join-url").textContent = data.url;
    $("join-url").href = data.url;
    const img = document.createElement("img");
    img.id = "join-image";
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(data.svg);
    img.alt = "QR code of " + data.url;
    $("join-qr").replaceChildren(img);
    $("join").hidden = false;
  }

  const HISTORY_SHOWN = 5;  // the last totals of each player, as paper shows them

  function show(data) {
    sheet = data;
    const names = game.players;
    const list = $("scores");
    list.innerHTML = "";
    data.players.forEach((p, i) => {
      const li = document.createElement("li");
      li.id = "player-" + i;
      const left = document.createElement("div");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = p.name;
      left.appendChild(name);
      if (i === data.to_move) {
        li.classList.add("to-move");
        li.setAttribute("aria-current", "step");
        const badge = document.createElement("span");
        badge.className = "badge";
        badge.textContent = "to play";
        left.append(" ", badge);
      }
      if (p.crosses) {
        const crosses = document.createElement("span");
        crosses.className = "crosses";
        crosses.textContent = " " + "✗".repeat(p.crosses);
        crosses.setAttribute("aria-label", p.crosses + (p.crosses === 1 ? " cross" : " crosses"));
        left.appendChild(crosses);
      }
      const hist = document.createElement("div");
      hist.className = "history";
      const shown = p.history.slice(-HISTORY_SHOWN);
      if (p.history.length > shown.length) hist.append("… ");
      for (const h of shown) {
        const el = document.createElement(h.struck ? "s" : "span");
        el.textContent = String(h.score);
        if (h.struck) el.setAttribute("aria-label", h.score + " struck out");
        hist.append(el, " ");
      }
      left.appendChild(hist);
      const right = document.createElement("div");
      right.className = "right";
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = p.score;
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.setAttribute("aria-hidden", "true");
      const fill = document.createElement("span");
      fill.style.width = Math.max(0, Math.min(100, 100 * p.score / ruleset.goal)) + "%";
      bar.appendChild(fill);
      right.append(score, bar);
      li.append(left, right);
      list.appendChild(li);
    });
    const over = data.winner !== null;
    $("winner").hidden = !over;
    $("winner").textContent = over ? names[data.winner] + " wins!" : "";
    let status = over ? "Game over." : names[data.to_move] + " to play";
    if (!over && data.last_round) status += " — last round (" + names[data.last_round.leader] + " leads)";
    if (!over && data.offer) status += " — may take over " + data.offer.points;
    $("status").textContent = status;
    const n = names.length, best = Math.max(...data.scores);
    const leader = data.scores.indexOf(best);
    $("progress-line").textContent = "Round " + (Math.floor(data.turns.length / n) + 1) + " · " +
      data.turns.length + (data.turns.length === 1 ? " turn" : " turns") + " · " +
      (best > 0 ? names[leader] + " leads with " + best + " of " + ruleset.goal : "nobody has scored yet, goal " + ruleset.goal);
    $("points-label").textContent = over ? "Points banked" : "Points banked by " + names[data.to_move];
    if (!over) $("win-yes").textContent = "Yes: " + names[data.to_move] + " wins";
    $("advice-who").textContent = over ? "—" : names[data.to_move];
    for (const id of ["points", "bank", "bust", "win", "win-yes", "advise"]) $(id).disabled = over;
    if (over) askWin(false);
    const turns = $("turns");
    turns.innerHTML = "";
    for (const t of data.turns.slice().reverse()) {
      const li = document.createElement("li");
      li.textContent = t.notes.join("; ") + " → " + t.scores.join(" / ");
      turns.appendChild(li);
    }
    $("turns").parentElement.querySelector("summary").textContent = "Turns (" + data.turns.length + ")";
    if (over) showReview(); else { $("review").hidden = true; reviewed = null; }
  }

  // -- the review of a finished game (cinqmille review: the questions asked of the advice, judged) ------------------
  let reviewed = null;  // the game (its entries and questions) whose review is shown

  async function showReview() {
    const key = JSON.stringify([game.entries, game.questions]);
    if (reviewed === key) return;
    reviewed = key;
    $("review").hidden = false;
    $("review-out").innerHTML = "";
    $("review-note").textContent = "…";
    for (let tries = 0; tries < 3000; tries++) {
      const {status, data} = await api("POST", "/api/review", game);
      if (status === 200) { renderReview(data); return; }
      if (status !== 202) { $("review-note").textContent = data.error; return; }
      if (!(await waitFor(data.job, "review-note"))) return;
      $("progress").hidden = true;
    }
  }

  function renderReview(r) {
    const out = $("review-out");
    out.innerHTML = "";
    if (r.note) { $("review-note").textContent = "Nothing to review: " + r.note + "."; return; }
    $("review-note").textContent = r.decisions.length + (r.decisions.length === 1 ? " decision" : " decisions") +
      " asked of the advice during the game, each judged against the best move" +
      (r.figures.includes("estimated") ? " (the chances estimated by playing the game out: a loss within " +
        (100 * r.margin).toFixed(1) + " points is not counted)" : "") + ".";
    const table = document.createElement("table");
    table.id = "review-lost";
    const caption = document.createElement("caption");
    caption.textContent = "Chance to win lost by each player";
    table.appendChild(caption);
    const head = table.createTHead().insertRow();
    for (const h of ["player", "points lost", "decisions"]) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = h;
      head.appendChild(th);
    }
    const body = table.createTBody();
    r.players.forEach((name, seat) => {
      const row = body.insertRow();
      const mine = r.decisions.filter((d) => d.seat === seat);
      row.insertCell().textContent = name + (r.winner === seat ? " (won)" : "");
      row.insertCell().textContent = (100 * r.lost[seat]).toFixed(2);
      row.insertCell().textContent = mine.filter((d) => d.counted > 0).length + " of " + mine.length;
    });
    out.appendChild(table);
    const h = document.createElement("h4");
    h.textContent = r.costliest_words.length ? "The costliest decisions" : "No decision lost any chance";
    out.appendChild(h);
    const list = document.createElement("ol");
    list.id = "review-costliest";
    for (const words of r.costliest_words) {
      const li = document.createElement("li");
      li.textContent = words.charAt(0).toUpperCase() + words.slice(1);
      list.appendChild(li);
    }
    out.appendChild(list);
  }

  async function enter(entry) {
    const candidate = {rules: game.rules, players: game.players, entries: game.entries.concat([entry])};
    const {status, data} = await api("POST", "/api/sheet", candidate);
    if (status !== 200) { $("refusal").textContent = data.error; return false; }
    $("refusal").textContent = "";
    game.entries.push(entry);
    save();
    show(data);
    clearAdvice();
    resetAdviceFields();
    return true;
  }

  async function bank(event) {
    event.preventDefault();
    const text = $("points").value.trim();
    if (!/^[0-9]+$/.test(text)) { $("refusal").textContent = "type the points banked (a whole number), or press Bust"; return; }
    const entry = {kind: "bank", points: parseInt(text, 10)};
    const dice = $("bank-dice").value.trim();
    if (ruleset.take_over && /^[0-9]$/.test(dice)) entry.dice = parseInt(dice, 10);
    if (ruleset.take_over && $("taken").checked) entry.taken = true;
    if (await enter(entry)) { $("points").value = ""; $("bank-dice").value = ""; $("taken").checked = false; }
    $("points").focus();
    $("points").select();
  }

  async function bust() {
    const entry = {kind: "bust"};
    if (ruleset.bust_strikes_last_score && $("all-dice").checked) entry.all_dice = true;
    if (await enter(entry)) $("all-dice").checked = false;
  }

  async function undo() {
    if (!game.entries.length) return;
    game.entries.pop();
    game.questions = game.questions.filter((q) => q.entry <= game.entries.length);
    save();
    const {data} = await api("POST", "/api/sheet", game);
    $("refusal").textContent = "";
    show(data);
    clearAdvice();
    resetAdviceFields();
  }

  async function download() {
    const {status, data} = await api("POST", "/api/log", game);
    if (status !== 200) { $("refusal").textContent = data.error; return; }
    const blob = new Blob([JSON.stringify(data, null, 2)], {type: "application/json"});
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "cinqmille-sheet.json";
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  async function loadLog(event) {
    const file = event.target.files[0];
    if (!file) return;
    let log;
    try { log = JSON.parse(await file.text()); } catch (e) { $("setup-error").textContent = "not a JSON file"; return; }
    const {status, data} = await api("POST", "/api/replay", log);
    if (status !== 200) { $("setup-error").textContent = data.error; return; }
    game = {rules: data.rules, players: data.players, entries: data.entries, questions: data.questions || []};
    save();
    await openGame();
  }

  function askWin(open) {
    $("win-confirm").hidden = !open;
    $("win").setAttribute("aria-expanded", String(open));
    if (open) {
      $("win-question").textContent = "Did " + game.players[sheet.to_move] + " roll five 1s? That ends the game at once.";
      $("win-no").focus();
    }
  }

  async function confirmWin() {
    askWin(false);
    await enter({kind: "win"});
  }

  function newGame() {
    if (game && game.entries.length && sheet && sheet.winner === null && !confirm("Abandon this game?")) return;
    game = null;
    save();
    clearAdvice();
    resetAdviceFields();
    showSetup();
  }

  // -- advice ------------------------------------------------------------------------------
  function renderFaces() {
    const box = $("faces");
    box.innerHTML = "";
    for (let f = 1; f <= 6; f++) {
      const b = document.createElement("button");
      b.type = "button";
      b.id = "face-" + f;
      b.textContent = f;
      b.setAttribute("aria-label", "add a " + f);
      b.addEventListener("click", () => {
        const roll = $("roll").value.replace(/[^1-6]/g, "");
        if (roll.length < (ruleset.dice || 5)) $("roll").value = roll + f;
      });
      box.appendChild(b);
    }
  }

  const FIELDS_KEY = "cinqmille.advice.v1";  // the advice fields of the turn in progress

  function saveAdviceFields() {
    const fields = {turns: game.entries.length, turn: $("turn").value, dice: $("dice").value, roll: $("roll").value};
    localStorage.setItem(FIELDS_KEY, JSON.stringify(fields));
  }

  function restoreAdviceFields() {
    let f = null;
    try { f = JSON.parse(localStorage.getItem(FIELDS_KEY) || "null"); } catch (e) { f = null; }
    if (!f || f.turns !== game.entries.length) { resetAdviceFields(); return; }
    $("turn").value = f.turn; $("dice").value = f.dice; $("roll").value = f.roll;
  }

  function resetAdviceFields() {
    $("turn").value = "0"; $("dice").value = ""; $("roll").value = "";
    localStorage.removeItem(FIELDS_KEY);
  }

  function clearAdvice() {
    $("advice-out").innerHTML = "";
    $("advice-note").textContent = "";
    $("progress").hidden = true;
  }

  const pct = (x, digits) => (x === null || x === undefined) ? "–" : (100 * x).toFixed(digits) + "%";

  const diceText = (n) => n + (n === 1 ? " die" : " dice");

  function moveText(o) {
    if (o.action === "bank") return "bank";
    if (o.action === "roll") return "roll";
    if (o.action === "take_over") return "take over";
    if (o.action === "start") return "start afresh";
    if (o.action) return o.action + (o.points ? " " + o.points : "");
    return "keep " + o.keep.join("");
  }

  // A bank-or-roll row says what it banks or how many dice it rolls; an offer row what it takes over.
  function actionText(o, pos) {
    if (o.action === "bank") return "bank " + pos.turn;
    if (o.action === "roll") return "roll " + diceText(pos.dice);
    if (o.action === "predict") return "announce " + o.points + ", roll " + diceText(pos.dice);
    if (o.action === "take_over") return "take over " + pos.offer.points + ", roll " + diceText(pos.offer.dice);
    if (o.action === "start") return "start afresh, roll " + diceText(ruleset.dice);
    return moveText(o);
  }

  function thenText(o) {
    if (o.then === "bank") return "bank " + o.turn;
    if (o.then === "roll") return "roll " + diceText(o.dice);
    if (o.then === "win") return "wins at once";
    if (o.then === "bust") return "past the goal: bust";
    return "";
  }

  // How the figures were obtained (the answer's `figure`), in a player's words; the solver's own text on demand.
  const FIGURE_HEAD = {exact: "", settled: "", estimated: "≈ ", relaxed: "≈ ", none: ""};

  function renderEstimate(a, out) {
    const f = a.figure;
    if (!f || f.kind === "exact") return;
    const p = document.createElement("p");
    p.id = "estimate";
    p.className = "estimate figure-" + f.kind;
    p.textContent = FIGURE_HEAD[f.kind] + f.how.charAt(0).toUpperCase() + f.how.slice(1) + ".";
    out.appendChild(p);
    if (!a.assumptions.length) return;
    const details = document.createElement("details");
    details.id = "estimate-why";
    const summary = document.createElement("summary");
    summary.textContent = "Details";
    const list = document.createElement("ul");
    for (const text of a.assumptions) {
      const li = document.createElement("li");
      li.textContent = text;
      list.appendChild(li);
    }
    details.append(summary, list);
    out.appendChild(details);
  }

  // The bank the answer offers, as a sheet entry: banking the points set aside (bank or roll), or keeping the advised
  // dice and banking the turn (a keep); null when the answer banks nothing (a bust, an instant win, no bank allowed).
  function advisedBank(a) {
    const pos = a.position, best = a.best;
    if (!best) return null;
    if (pos.roll === undefined) {
      const o = a.options.find((x) => x.action === "bank");
      return o ? {points: pos.turn, dice: pos.dice, best: best.action === "bank"} : null;
    }
    if ((best.then !== "bank" && best.then !== "roll") || best.bank === null || best.bank === undefined) return null;
    return {points: best.turn, dice: best.dice, best: best.then === "bank", keep: best.keep};
  }

  function bankButton(a, out) {
    const offer = advisedBank(a);
    if (!offer || !sheet || sheet.to_move === null) return;
    const b = document.createElement("button");
    b.type = "button";
    b.id = "bank-advised";
    b.className = offer.best ? "primary" : "";
    const who = game.players[sheet.to_move];
    b.textContent = (offer.keep ? "Keep " + offer.keep.join("-") + " and bank " : "Bank ") + offer.points +
      " for " + who;
    b.dataset.points = String(offer.points);
    b.addEventListener("click", async () => {
      const entry = {kind: "bank", points: offer.points};
      if (ruleset.take_over && offer.dice) entry.dice = offer.dice;
      if (await enter(entry)) $("points").value = "";
    });
    const row = document.createElement("div");
    row.className = "row";
    row.appendChild(b);
    out.appendChild(row);
  }

  function renderAdvice(a) {
    const out = $("advice-out");
    out.innerHTML = "";
    const p = document.createElement("p");
    p.id = "sentence";
    p.textContent = a.sentence;
    out.appendChild(p);
    bankButton(a, out);
    renderEstimate(a, out);
    if (!a.options.length) return;
    const keeps = a.options[0].keep !== undefined;
    const approx = a.figure && (a.figure.kind === "exact" || a.figure.kind === "settled") ? "" : "≈ ";
    const table = document.createElement("table");
    table.id = "options";
    const caption = document.createElement("caption");
    caption.textContent = "The options, best first";
    table.appendChild(caption);
    const head = table.createTHead().insertRow();
    const heads = keeps ? [["keep", "keep (points)"], ["then", "then"], ["win", "chance to win"],
      ["exp.", "expected points of the turn"], ["bust", "chance that the next roll busts"]]
      : [["move", "move"], ["win", "chance to win"], ["exp.", "expected points of the turn"],
        ["bust", "chance that the next roll busts"]];
    for (const [h, title] of heads) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = h;
      if (title !== h) th.title = title;
      if (h === "then") th.className = "then";
      head.appendChild(th);
    }
    const body = table.createTBody();
    a.options.forEach((o, i) => {
      const row = body.insertRow();
      if (i === 0) row.className = "best";
      row.dataset.move = moveText(o);
      row.dataset.then = o.then || "";
      row.dataset.win = String(o.win);
      if (keeps) {
        const cell = row.insertCell();
        cell.append(o.keep.join("-"));
        const pts = document.createElement("span");
        pts.className = "points";
        pts.textContent = o.points;
        cell.append(" ", pts);
        row.insertCell().textContent = thenText(o);
        row.cells[1].className = "then";
      } else {
        row.insertCell().textContent = actionText(o, a.position);
      }
      for (const cell of [(o.win === null ? "" : approx) + pct(o.win, 2), o.expected.toFixed(1), pct(o.bust, 1)]) {
        row.insertCell().textContent = cell;
      }
    });
    out.appendChild(table);
  }

  // The answer's sentence and its bank button in view (on a phone the answer may land below the fold), without
  // moving a page that shows them.
  function bringIntoView(first, last) {
    const top = first.getBoundingClientRect().top, bottom = last.getBoundingClientRect().bottom;
    if (top < 0) window.scrollBy(0, top - 12);
    else if (bottom > window.innerHeight - 8) window.scrollBy(0, Math.min(top - 12, bottom - window.innerHeight + 12));
  }

  // After a keep that rolls on, the next question of the turn starts from it: its points set aside, its dice.
  function followKeep(a) {
    const best = a.best;
    if (!best || best.then !== "roll") return;
    $("turn").value = String(best.turn);
    $("dice").value = String(best.dice);
    $("roll").value = "";
  }

  async function advise(event) {
    event.preventDefault();
    if (!sheet || sheet.winner !== null) return;
    const body = {rules: game.rules, players: game.players, entries: game.entries};
    const turn = $("turn").value.trim(), dice = $("dice").value.trim(), roll = $("roll").value.trim();
    for (const [name, text] of [["set aside", turn], ["dice in hand", dice]]) {
      if (text && !/^[0-9]+$/.test(text)) { $("advice-note").textContent = name + ": a whole number"; return; }
    }
    if (turn) body.turn = parseInt(turn, 10);
    if (dice) body.dice = parseInt(dice, 10);
    if (roll) body.roll = roll;
    $("advice-note").textContent = "…";
    for (let tries = 0; tries < 3000; tries++) {
      const {status, data} = await api("POST", "/api/advice", body);
      if (status === 200) {
        $("progress").hidden = true;
        $("advice-note").textContent = "";
        remember({entry: game.entries.length, turn: body.turn || 0, dice: body.dice === undefined ? null : body.dice,
                  roll: body.roll === undefined ? null : body.roll});
        renderAdvice(data);
        bringIntoView($("sentence"), $("bank-advised") || $("sentence"));
        followKeep(data);
        saveAdviceFields();
        return;
      }
      if (status !== 202) { $("progress").hidden = true; $("advice-note").textContent = data.error; $("advice-out").innerHTML = ""; return; }
      showInterim(data.interim);
      if (!(await waitFor(data.job))) return;
    }
  }

  // While the table of a game of three or more is solved: the two-player table's move, without a chance.
  function showInterim(interim) {
    if (!interim) return;
    const p = document.createElement("p");
    p.id = "interim";
    p.className = "estimate figure-none";
    p.textContent = interim.text;
    $("advice-out").replaceChildren(p);
  }

  // The questions asked of the advice, kept with the game for its review (a question asked twice is kept once).
  function remember(q) {
    const last = game.questions[game.questions.length - 1];
    if (last && JSON.stringify(last) === JSON.stringify(q)) return;
    game.questions.push(q);
    save();
  }

  async function waitFor(job, note = "advice-note") {
    const bar = $("progress");
    bar.hidden = false;
    for (;;) {
      const {status, data} = await api("GET", "/api/progress?job=" + encodeURIComponent(job));
      if (status !== 200) { $(note).textContent = data.error; bar.hidden = true; return false; }
      bar.value = data.progress;
      $(note).textContent = "Solving '" + data.rules + "' (first use, cached afterwards): " +
        Math.round(100 * data.progress) + " %";
      if (data.status === "error") { $(note).textContent = data.error; bar.hidden = true; return false; }
      if (data.status === "ready") return true;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  // The tables the server was told to prepare (serve --prepare 4): "four-player table of 'standard': solving,
  // 42 %", polled while one is being solved, and "... ready" once it is.
  const PREPARED_EVERY = 5000;
  async function showPrepared() {
    const {status, data} = await api("GET", "/api/prepared");
    const tables = status === 200 ? data.tables || [] : [];
    const line = $("prepared");
    line.hidden = !tables.length;
    line.textContent = tables.map((t) => t.text).join(" · ");
    if (tables.some((t) => t.status === "solving")) setTimeout(showPrepared, PREPARED_EVERY);
  }

  // -- wiring ----------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", async () => {
    $("setup-form").addEventListener("submit", startGame);
    $("add-player").addEventListener("click", () => { addName(); prepare(); });
    $("remove-player").addEventListener("click", () => {
      const i = nameInputs();
      if (i.length > 2) i[i.length - 1].remove();
      prepare();
    });
    $("rules").addEventListener("change", () => { uploaded = null; $("rules-file").value = ""; showUploaded(); prepare(); });
    for (const id of ["turn", "dice", "roll"]) $(id).addEventListener("change", () => { if (game) saveAdviceFields(); });
    $("rules-file").addEventListener("change", async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      const toml = await file.text();
      const {status, data} = await api("POST", "/api/rules", {rules: {toml}});
      if (status !== 200) { $("setup-error").textContent = data.error; uploaded = null; }
      else { $("setup-error").textContent = ""; uploaded = {toml, name: data.name}; }
      showUploaded();
      prepare();
    });
    $("load-log").addEventListener("change", loadLog);
    $("entry-form").addEventListener("submit", bank);
    $("bust").addEventListener("click", bust);
    $("win").addEventListener("click", () => askWin($("win-confirm").hidden));
    $("win-yes").addEventListener("click", confirmWin);
    $("win-no").addEventListener("click", () => { askWin(false); $("win").focus(); });
    $("undo").addEventListener("click", undo);
    $("download").addEventListener("click", download);
    $("new-game").addEventListener("click", newGame);
    $("advice-form").addEventListener("submit", advise);
    $("clear-roll").addEventListener("click", () => { $("roll").value = ""; $("roll").focus(); });
    showPrepared();
    game = load();
    if (game) await openGame(); else await showSetup();
  });
})();
