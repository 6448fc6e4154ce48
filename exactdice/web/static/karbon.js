// The Karbon contest calculator: the form, the answer with bars, exact fractions, how long
// the contest lasts and the what-if strip (both drawn from the library's exact charts).
"use strict";

(async () => {
  const form = document.getElementById("karbon-form");
  const fields = await exactdice.fieldsOf("karbon");
  exactdice.buildSections(form, fields, true);
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");
  let generation = 0;        // a new submit makes older loops stop
  // the answer's job and the what-if strip's, apart: the strip must not make Cancel stop its
  // own job while the answer's job runs on
  let answerJob = null;
  let whatIfJob = null;
  let lengthJob = null;
  function cancelJobs() {
    for (const job of [answerJob, whatIfJob, lengthJob]) if (job) exactdice.cancel(job);
    answerJob = whatIfJob = lengthJob = null;
  }
  let exactText = "";
  const LABELS = {win: "P(win)", loss: "P(loss)", tie: "P(tie)", never_ends: "P(never ends)"};

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
      `lower bound: what the strategy found guarantees against ${result.against}` +
        (result.lower.exact ? " (its exact value rounded down; the fraction under Exact fractions)" : " (rounded down)"),
      "upper bound: no play of the player beats it (rounded up)",
    ];
    const fixed = result.fixed_value;
    if (fixed) notes.push(result.lower.exact === fixed.exact
      ? "the lower bound is the fixed preferences' value: no better strategy is certified yet"
      : `the fixed preferences' value: ${fixed.decimal.slice(0, fixed.decimal.indexOf(".") + 5)}\u2026 (the search starts from it)`);
    if (result.wide) notes.push("these bounds are still wide: the search got nowhere near the " +
      "answer in the time and states given, so the choices below are not advice yet. For an exact answer make the " +
      "game smaller: explicit hands (Player hand, Narrator hand) with a small Pool and Reserve (none at all is " +
      "quickest); or search for " +
      "longer from the command line: exactdice karbon odds --player-policy optimal --max-seconds 600");
    const list = document.getElementById("bounds-notes");
    list.innerHTML = "";
    for (const note of notes) { const li = document.createElement("li"); li.textContent = note; list.appendChild(li); }
    const oddsHeading = document.getElementById("strategy-odds-heading");
    oddsHeading.textContent = `The strategy's exact odds against ${result.against}:`;
    oddsHeading.classList.toggle("hidden", !result.strategy_outcomes);
  }

  function showOdds(rows, lines) {
    const odds = document.getElementById("odds");
    odds.innerHTML = "";
    for (const row of rows) {
      if (row.outcome === "never_ends" && row.p.exact === "0") continue;
      const line = document.createElement("div");
      line.className = "odds-row";
      line.title = row.words;
      line.innerHTML = `<span>${LABELS[row.outcome]}</span><span class="pct" id="pct-${row.outcome}">${row.p.shown}%</span>` +
        `<div class="bar"><span class="${row.outcome}" style="width:${Math.min(100, parseFloat(row.p.percent))}%"></span></div>`;
      odds.appendChild(line);
      lines.push(`${LABELS[row.outcome]} = ${row.p.exact}`);
    }
  }

  function showExpectations(expectations, lines) {
    const body = document.querySelector("#expectations tbody");
    body.innerHTML = "";
    for (const [name, value] of Object.entries(expectations)) {
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
  }

  function showAdvice(advice, bounds) {
    const advice_ = advice || [];
    document.getElementById("advice-box").classList.toggle("hidden", !advice_.length);
    const list = document.getElementById("advice");
    list.innerHTML = "";
    for (const line of advice_) { const li = document.createElement("li"); li.textContent = line; list.appendChild(li); }
    // bounds: the choices folded away, with how many are certified best
    const certified = advice_.filter(line => line.includes("(certified best)")).length;
    const choices = advice_.filter(line => line.includes("Risk: ")).length;
    document.getElementById("advice-more").open = !bounds;
    document.getElementById("advice-summary").textContent = bounds
      ? `${choices} risk choices, ${certified} of them certified best (click to show)`
      : "the draw and each first roll's risk choice";
  }

  // how long it lasts: asked after the odds (it can take several times the solve)
  async function showLength(values, mine) {
    const box = document.getElementById("length-box"), note = document.getElementById("length-note");
    box.classList.remove("hidden");
    const canvas = document.getElementById("length-chart");
    const old = Chart.getChart(canvas);
    if (old) old.destroy();
    note.textContent = "computing\u2026";
    const data = await ask("/api/karbon/length", values, mine, (text, job) => { lengthJob = job; note.textContent = text; });
    if (mine !== generation) return;
    lengthJob = null;
    if (data.status !== "done") {
      note.textContent = data.status === "cancelled" ? "cancelled" : Object.values(data.errors || {}).join(" ");
      return;
    }
    const chart = data.result.charts.length;
    exactdice.drawChart(canvas, chart);
    note.textContent = chart.note;
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
    const lines = [];
    if (bounds && result.lower.exact) lines.push(`lower bound = ${result.lower.exact}`);
    showOdds(bounds ? (result.strategy_outcomes || []) : result.outcomes, lines);
    showExpectations(bounds ? {} : result.expectations, lines);
    exactText = lines.join("\n");
    document.getElementById("show-exact").classList.toggle("hidden", !lines.length);
    const box = document.getElementById("exact-box");
    box.textContent = "";
    for (const line of lines) { const div = document.createElement("div"); div.className = "exact"; div.textContent = line; box.appendChild(div); }
    document.getElementById("solve-info").textContent = bounds
      ? `${result.explored.toLocaleString()} states explored by the bounds' search; ${result.seconds} s in all`
      : `${result.provenance.states.toLocaleString()} states, ${result.provenance.transitions.toLocaleString()} transitions; ` +
        (cached ? `from the results store in ${seconds.toFixed(2)} s` : `solved in ${result.seconds} s`);
    for (const side of ["player", "narrator", "rules"]) document.getElementById(`played-${side}`).textContent =
      result.in_words[side];
    showAdvice(result.advice, bounds);
    document.getElementById("length-box").classList.add("hidden");
  }

  // the job of submit number `mine`: Cancel or a new submit may come before its id does,
  // and then nobody holds the id to cancel it, so it is stopped here (or it would hold a worker)
  async function ask(url, values, mine, onProgress) {
    const {code, data} = await exactdice.postJSON(url, values);
    if (code === 422) return data;
    if (mine !== generation) {
      if (data.job) exactdice.cancel(data.job);
      return {status: "cancelled"};
    }
    return exactdice.follow(data, (text, job) => { if (mine === generation) onProgress(text, job); });
  }

  // P(win) with each setup parameter one step down and up: one small chart each, as the
  // command line's `karbon sensitivity --plot` draws them
  async function whatIf(values, mine) {
    const strip = document.getElementById("whatif");
    const note = document.getElementById("whatif-note");
    const stripStatus = document.getElementById("whatif-status");
    strip.innerHTML = ""; note.textContent = "";
    if ((values.player_dice || "").trim() !== "") {
      stripStatus.textContent = "(the what-if strip steps the draw: not with explicit hands)";
      return;
    }
    stripStatus.textContent = "computing\u2026";
    const data = await ask("/api/karbon/whatif", values, mine, (text, job) => { whatIfJob = job; stripStatus.textContent = text; });
    if (mine !== generation) return;
    whatIfJob = null;
    if (data.status !== "done") {
      stripStatus.textContent = data.status === "cancelled" ? "cancelled" : Object.values(data.errors || {}).join(" ");
      return;
    }
    stripStatus.textContent = "P(win) one step down and up from this setup (exact values; the base marked):";
    for (const chart of data.result.charts) {
      const cell = document.createElement("div");
      cell.className = "cell";
      const canvas = document.createElement("canvas");
      canvas.id = `whatif-${chart.title.split(" ")[0].toLowerCase()}`;
      canvas.height = 170; canvas.width = 230;
      cell.appendChild(canvas);
      strip.appendChild(cell);
      exactdice.drawChart(canvas, chart);
    }
    note.textContent = data.result.skipped.map(([name, why]) => `${name}: ${why}`).join("; ");
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
    const data = await ask("/api/karbon/odds", values, mine, (text, job) => { answerJob = job; status.textContent = text; });
    if (mine !== generation) return;
    answerJob = null;
    cancelButton.classList.add("hidden");
    if (data.status === "done") {
      status.textContent = data.cached ? "answered from the results store" : "";
      showAnswer(data.result, data.seconds, data.cached);
      if (data.result.kind === "bounds") {
        document.getElementById("whatif").textContent = "";
        document.getElementById("whatif-status").textContent = "(not with bounds: each change would search again)";
      } else whatIf(values, mine).then(() => { if (mine === generation) showLength(values, mine); });
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
