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
      if (g && Array.isArray(g.players) && Array.isArray(g.entries)) return g;
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
        option.textContent = p.name + " — " + p.description;
        select.appendChild(option);
      }
      if (typeof data.default === "string") select.value = data.default;
      else if (data.default) { uploaded = {toml: data.default.toml, name: data.default_name}; showUploaded(); }
    }
    if (!nameInputs().length) { addName(); addName(); }
    nameInputs()[0].focus();
  }

  function showUploaded() {
    $("rules-info").textContent = uploaded ? "Using the rules file '" + uploaded.name + "'." : "";
  }

  async function startGame(event) {
    event.preventDefault();
    const players = nameInputs().map((i) => i.value.trim());
    const rules = uploaded ? {toml: uploaded.toml} : $("rules").value;
    const candidate = {rules, players, entries: []};
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
    const s = await api("POST", "/api/sheet", game);
    if (s.status !== 200) {  // a stored game that the rules refuse now: keep what they accept
      if (s.status !== 422 || !game.entries.length) { game = null; save(); $("setup-error").textContent = s.data.error; return showSetup(); }
      game.entries = game.entries.slice(0, s.data.entry || 0);
      save();
      return openGame();
    }
    $("setup").hidden = true;
    $("game").hidden = false;
    $("taken-label").hidden = !ruleset.take_over;
    $("bank-dice-label").hidden = !ruleset.take_over;
    $("all-dice-label").hidden = !ruleset.bust_strikes_last_score;
    $("win").hidden = ruleset.five_ones !== "win";
    renderFaces();
    show(s.data);
    $("points").focus();
  }

  function show(data) {
    sheet = data;
    const names = game.players;
    const list = $("scores");
    list.innerHTML = "";
    data.players.forEach((p, i) => {
      const li = document.createElement("li");
      li.id = "player-" + i;
      if (i === data.to_move) li.classList.add("to-move");
      const left = document.createElement("span");
      left.textContent = p.name + (p.crosses ? " " + "✗".repeat(p.crosses) : "");
      const hist = document.createElement("div");
      hist.className = "history";
      for (const h of p.history) {
        const el = document.createElement(h.struck ? "s" : "span");
        el.textContent = h.score + " ";
        hist.appendChild(el);
      }
      left.appendChild(hist);
      const right = document.createElement("span");
      right.className = "score";
      right.textContent = p.score;
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
    $("advice-who").textContent = over ? "—" : names[data.to_move];
    for (const id of ["points", "bank", "bust", "win", "advise"]) $(id).disabled = over;
    const turns = $("turns");
    turns.innerHTML = "";
    for (const t of data.turns.slice().reverse()) {
      const li = document.createElement("li");
      li.textContent = t.notes.join("; ") + " → " + t.scores.join(" / ");
      turns.appendChild(li);
    }
    $("turns").parentElement.querySelector("summary").textContent = "Turns (" + data.turns.length + ")";
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
    save();
    const {data} = await api("POST", "/api/sheet", game);
    $("refusal").textContent = "";
    show(data);
    clearAdvice();
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
    game = {rules: data.rules, players: data.players, entries: data.entries};
    save();
    await openGame();
  }

  function newGame() {
    if (game && game.entries.length && sheet && sheet.winner === null && !confirm("Abandon this game?")) return;
    game = null;
    save();
    clearAdvice();
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

  function clearAdvice() {
    $("advice-out").innerHTML = "";
    $("advice-note").textContent = "";
    $("progress").hidden = true;
  }

  const pct = (x, digits) => (x === null || x === undefined) ? "–" : (100 * x).toFixed(digits) + "%";

  function moveText(o) {
    if (o.action === "bank") return "bank";
    if (o.action === "roll") return "roll";
    if (o.action === "take_over") return "take over";
    if (o.action === "start") return "start afresh";
    if (o.action) return o.action + (o.points ? " " + o.points : "");
    return "keep " + o.keep.join("");
  }

  function renderAdvice(a) {
    const out = $("advice-out");
    out.innerHTML = "";
    const p = document.createElement("p");
    p.id = "sentence";
    p.textContent = a.sentence;
    out.appendChild(p);
    if (!a.options.length) return;
    const table = document.createElement("table");
    table.id = "options";
    const head = table.insertRow();
    for (const h of ["move", "points", "then", "win", "expected", "bust"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    }
    a.options.forEach((o, i) => {
      const row = table.insertRow();
      if (i === 0) row.className = "best";
      row.dataset.move = moveText(o);
      row.dataset.then = o.then || "";
      row.dataset.win = String(o.win);
      const then = o.then ? o.then + (o.then === "roll" ? " " + o.dice : "") : "";
      for (const cell of [moveText(o), o.points === undefined || o.points === null ? "" : o.points, then,
                          pct(o.win, 2), o.expected.toFixed(1), pct(o.bust, 1)]) {
        row.insertCell().textContent = cell;
      }
    });
    out.appendChild(table);
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
      if (status === 200) { $("progress").hidden = true; $("advice-note").textContent = ""; renderAdvice(data); return; }
      if (status !== 202) { $("progress").hidden = true; $("advice-note").textContent = data.error; $("advice-out").innerHTML = ""; return; }
      if (!(await waitFor(data.job))) return;
    }
  }

  async function waitFor(job) {
    const bar = $("progress");
    bar.hidden = false;
    for (;;) {
      const {status, data} = await api("GET", "/api/progress?job=" + encodeURIComponent(job));
      if (status !== 200) { $("advice-note").textContent = data.error; bar.hidden = true; return false; }
      bar.value = data.progress;
      $("advice-note").textContent = "Solving '" + data.rules + "' (first use, cached afterwards): " +
        Math.round(100 * data.progress) + " %";
      if (data.status === "error") { $("advice-note").textContent = data.error; bar.hidden = true; return false; }
      if (data.status === "ready") return true;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  // -- wiring ----------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", async () => {
    $("setup-form").addEventListener("submit", startGame);
    $("add-player").addEventListener("click", () => addName());
    $("remove-player").addEventListener("click", () => { const i = nameInputs(); if (i.length > 2) i[i.length - 1].remove(); });
    $("rules").addEventListener("change", () => { uploaded = null; $("rules-file").value = ""; showUploaded(); });
    $("rules-file").addEventListener("change", async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      const toml = await file.text();
      const {status, data} = await api("POST", "/api/rules", {rules: {toml}});
      if (status !== 200) { $("setup-error").textContent = data.error; uploaded = null; }
      else { $("setup-error").textContent = ""; uploaded = {toml, name: data.name}; }
      showUploaded();
    });
    $("load-log").addEventListener("change", loadLog);
    $("entry-form").addEventListener("submit", bank);
    $("bust").addEventListener("click", bust);
    $("win").addEventListener("click", () => enter({kind: "win"}));
    $("undo").addEventListener("click", undo);
    $("download").addEventListener("click", download);
    $("new-game").addEventListener("click", newGame);
    $("advice-form").addEventListener("submit", advise);
    $("clear-roll").addEventListener("click", () => { $("roll").value = ""; $("roll").focus(); });
    game = load();
    if (game) await openGame(); else await showSetup();
  });
})();
