// The Karbon contest calculator: the form, the answer with bars, exact fractions, what-if strip.
"use strict";

(async () => {
  const form = document.getElementById("karbon-form");
  const MAIN = ["ability", "challenge", "consequence", "peril", "fortune", "fallout", "training"];
  const fields = await exactdice.fieldsOf("karbon");
  exactdice.buildFields(document.getElementById("main-fields"), fields, f => MAIN.includes(f.name));
  exactdice.buildFields(document.getElementById("more-fields"), fields, f => !MAIN.includes(f.name));
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");
  const OUTCOMES = [["win", "P(win)"], ["loss", "P(loss)"], ["tie", "P(tie)"], ["never_ends", "P(never ends)"]];
  const EXPECTED = ["rounds", "breaks", "glitches", "injuries", "conditions"];
  const WHATIF = [["challenge", -1], ["challenge", 1], ["peril", -1], ["peril", 1], ["consequence", -1], ["consequence", 1]];
  let generation = 0;        // a new submit makes older loops stop
  // the answer's job and the what-if strip's, apart: a what-if poll must not make Cancel
  // stop its own job while the answer's job runs on
  let answerJob = null;
  let whatIfJob = null;
  function cancelJobs() {
    for (const job of [answerJob, whatIfJob]) if (job) exactdice.cancel(job);
    answerJob = whatIfJob = null;
  }
  let exactText = "";

  // An optimal player past Max states: certified bounds on the value, and the odds of the
  // strategy found where its game was solved exactly.
  function showBounds(result) {
    document.getElementById("bounds-heading").textContent =
      `The exact game is too large (${result.too_large}), so here are certified bounds on the optimal player's ${result.objective}.`;
    const lower = result.lower.decimal, upper = result.upper.decimal;
    document.getElementById("bounds-interval").textContent = `[${lower}, ${upper}]`;
    const bar = document.getElementById("bounds-bar");
    bar.style.marginLeft = `${100 * parseFloat(lower)}%`;
    bar.style.width = `${100 * (parseFloat(upper) - parseFloat(lower))}%`;
    const notes = [
      `gap ${result.gap}: ` + (result.reached ? `within the precision ${result.precision}`
                                              : `the search stopped because ${result.stopped}`),
      "lower bound: what the strategy found guarantees against the narrator's best reply" +
        (result.lower.exact ? " (its exact value rounded down; the fraction under Exact fractions)" : " (rounded down)"),
      "upper bound: no play of the player beats it (rounded up)",
    ];
    const fixed = result.fixed_preferences_value;
    if (fixed) notes.push(result.lower.exact === fixed.exact
      ? "the lower bound is the fixed preferences' value: no better strategy is certified yet"
      : `the fixed preferences' value: ${fixed.decimal.slice(0, fixed.decimal.indexOf(".") + 5)}\u2026 (the search starts from it)`);
    if (result.wide) notes.push("these bounds are still wide: the search got nowhere near the " +
      "answer in the time and states given, so the choices below are not advice yet. For an exact answer make the " +
      "game smaller: a smaller Pool and Reserve, or explicit hands (Player hand, Narrator hand); or search for " +
      "longer from the command line: exactdice karbon odds --player-policy optimal --max-seconds 600");
    const list = document.getElementById("bounds-notes");
    list.innerHTML = "";
    for (const note of notes) { const li = document.createElement("li"); li.textContent = note; list.appendChild(li); }
    document.getElementById("strategy-odds-heading").classList.toggle("hidden", !result.strategy_odds);
  }

  function showAnswer(result, seconds, cached) {
    const bounds = result.kind === "bounds";
    document.getElementById("answer").classList.remove("hidden");
    document.getElementById("bounds-box").classList.toggle("hidden", !bounds);
    document.getElementById("expectations").classList.toggle("hidden", bounds);
    if (bounds) showBounds(result);
    document.getElementById("draws").textContent = bounds && !result.draws
      ? "Draws: the optimal player's draw is searched (its choice is under First round below)"
      : `${bounds ? "Hands" : "Draws"}: player ${result.draws.player}, narrator ${result.draws.narrator}`;
    const odds = document.getElementById("odds");
    odds.innerHTML = "";
    const lines = [];
    if (bounds && result.lower.exact) lines.push(`lower bound = ${result.lower.exact}`);
    const shownOdds = bounds ? (result.strategy_odds || {}) : result;
    for (const [name, label] of OUTCOMES) {
      const value = shownOdds[name];
      if (!value || (name === "never_ends" && value.exact === "0")) continue;
      const row = document.createElement("div");
      row.className = "odds-row";
      row.innerHTML = `<span>${label}</span><span class="pct" id="pct-${name}">${value.shown}%</span>` +
        `<div class="bar"><span class="${name}" style="width:${Math.min(100, parseFloat(value.percent))}%"></span></div>`;
      odds.appendChild(row);
      lines.push(`${label} = ${value.exact}`);
    }
    const body = document.querySelector("#expectations tbody");
    body.innerHTML = "";
    for (const name of bounds ? [] : EXPECTED) {
      const value = result[`expected_${name}`];
      const row = document.createElement("tr");
      // as with probabilities, only an exact 0 reads 0
      const fixed = value && Number(value.decimal).toFixed(4);
      const shown = !value ? "undefined (may never end)" : value.exact === "0" ? "0"
        : fixed !== "0.0000" ? fixed : Number(value.decimal) > 0 ? Number(value.decimal).toPrecision(2) : "< 1e-10";
      row.innerHTML = `<td>${name}</td><td id="exp-${name}">${shown}</td>` +
        `<td><button type="button" class="exact-one" title="${value ? value.exact : "undefined"}">copy exact</button></td>`;
      row.querySelector("button").onclick = event => exactdice.copyText(value ? value.exact : "undefined", event.target);
      body.appendChild(row);
      lines.push(`expected ${name} = ${value ? value.exact : "undefined"}`);
    }
    exactText = lines.join("\n");
    document.getElementById("show-exact").classList.toggle("hidden", !lines.length);
    const box = document.getElementById("exact-box");
    box.textContent = "";
    for (const line of lines) { const div = document.createElement("div"); div.className = "exact"; div.textContent = line; box.appendChild(div); }
    document.getElementById("solve-info").textContent = (bounds
      ? `${result.states_explored.toLocaleString()} states explored by the bounds' search; ${result.seconds} s in all`
      : `${result.states.toLocaleString()} states, ${result.transitions.toLocaleString()} transitions; ` +
        (cached ? `from the results store in ${Math.round(1000 * seconds)} ms` : `solved in ${result.solve_ms} ms`));
    for (const side of ["player", "narrator", "rules"]) document.getElementById(`played-${side}`).textContent =
      result.in_words[side];
    const adviceBox = document.getElementById("advice-box");
    const advice = document.getElementById("advice");
    advice.innerHTML = "";
    adviceBox.classList.toggle("hidden", !result.advice || !result.advice.length);
    for (const line of result.advice || []) { const li = document.createElement("li"); li.textContent = line; advice.appendChild(li); }
    // bounds: the choices folded away, with how many are certified best
    const certified = (result.advice || []).filter(line => line.includes("(certified best)")).length;
    const choices = (result.advice || []).filter(line => line.includes("Risk: ")).length;
    document.getElementById("advice-more").open = !bounds;
    document.getElementById("advice-summary").textContent = bounds
      ? `${choices} risk choices, ${certified} of them certified best (click to show)`
      : "the draw and each first roll's risk choice";
  }

  // the job of submit number `mine`: Cancel or a new submit may come before its id does,
  // and then nobody holds the id to cancel it, so it is stopped here (or it would hold a worker)
  async function ask(values, mine, onProgress) {
    const {code, data} = await exactdice.postJSON("/api/karbon/odds", values);
    if (code === 422) return data;
    if (mine !== generation) {
      if (data.job) exactdice.cancel(data.job);
      return {status: "cancelled"};
    }
    return exactdice.follow(data, (text, job) => { if (mine === generation) onProgress(text, job); });
  }

  async function whatIf(values, base, mine) {
    const strip = document.getElementById("whatif");
    strip.innerHTML = "";
    const cells = WHATIF.map(([name, step]) => {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.id = `whatif-${name}-${step > 0 ? "up" : "down"}`;
      const label = name.charAt(0).toUpperCase() + name.slice(1);
      cell.innerHTML = `<div class="label">${label} ${step > 0 ? "+1" : "\u22121"} (${Number(values[name]) + step})</div><div class="value">\u2026</div>`;
      strip.appendChild(cell);
      return cell;
    });
    const explicit = (values.player_dice || "").trim() !== "";
    for (let i = 0; i < WHATIF.length; i++) {
      if (mine !== generation) return;
      const [name, step] = WHATIF[i];
      if (explicit && name === "challenge") {   // explicit hands: no draw, so no Challenge
        cells[i].querySelector(".value").textContent = "n/a (explicit hands)";
        continue;
      }
      const field = fields.find(f => f.name === name);
      const changedValue = Number(values[name]) + step;
      if ((field.low !== null && changedValue < field.low) || (field.high !== null && changedValue > field.high)) {
        cells[i].querySelector(".value").textContent =
          `n/a: ${field.label} can't go ${changedValue < field.low ? `below ${field.low}` : `above ${field.high}`}`;
        continue;
      }
      // no bounds search per cell: a change past Max states shows the limit's message
      const changed = Object.assign({}, values, {[name]: String(changedValue), max_seconds: "0"});
      const data = await ask(changed, mine, (text, job) => { whatIfJob = job; });
      const value = cells[i].querySelector(".value");
      if (data.status === "done") {
        const diff = parseFloat(data.result.win.percent) - parseFloat(base.win.percent);
        value.innerHTML = `P(win) ${data.result.win.shown}% <span class="${diff >= 0 ? "up" : "down"}">(${diff >= 0 ? "+" : ""}${diff.toFixed(2)})</span>` +
          `<div class="label">loss ${data.result.loss.shown}%, tie ${data.result.tie.shown}%</div>`;
        value.title = data.result.win.exact;
      } else if (data.status === "cancelled") {
        value.textContent = "cancelled";
      } else {   // n/a: the change is not allowed here (a field's error: the pool cannot supply
                 // the dice, say); a dash: it could not be computed (past Max states, out of memory)
        const refused = Object.keys(data.errors || {}).some(name => !["max_states", "form"].includes(name));
        value.textContent = refused ? "n/a" : "\u2014";
        const why = document.createElement("div");
        why.className = "label";
        why.textContent = Object.values(data.errors || {}).join(" ");
        value.appendChild(why);
      }
    }
    if (mine === generation) whatIfJob = null;
  }

  form.addEventListener("submit", async event => {
    event.preventDefault();
    const mine = ++generation;
    cancelJobs();
    document.getElementById("answer").classList.add("hidden");   // never the last answer beside new inputs
    exactdice.clearErrors(form);
    const values = exactdice.formValues(form);
    status.textContent = "computing\u2026";
    cancelButton.classList.remove("hidden");
    const data = await ask(values, mine, (text, job) => { answerJob = job; status.textContent = text; });
    if (mine !== generation) return;
    answerJob = null;
    cancelButton.classList.add("hidden");
    if (data.status === "done") {
      status.textContent = data.cached ? "answered from the results store" : "";
      showAnswer(data.result, data.seconds, data.cached);
      if (data.result.kind === "bounds") document.getElementById("whatif").textContent = "(not with bounds: each change would search again)";
      else whatIf(values, data.result, mine);
    } else if (data.status === "cancelled") {
      status.textContent = "cancelled";
    } else {
      status.textContent = "";
      exactdice.showErrors(form, data.errors);
    }
  });

  cancelButton.addEventListener("click", async () => {
    generation++;
    cancelJobs();
    cancelButton.classList.add("hidden");
    status.textContent = "cancelled";
  });

  document.getElementById("show-exact").addEventListener("click", () => {
    document.getElementById("exact-box").classList.toggle("hidden");
    document.getElementById("copy-exact").classList.toggle("hidden");
  });
  document.getElementById("copy-exact").addEventListener("click", event => exactdice.copyText(exactText, event.target));
  form.dataset.ready = "yes";
})();
