// The Validate page: a CSV of simulated outcomes against the exact Karbon distribution.
"use strict";

(async () => {
  const form = document.getElementById("validate-form");
  const choice = document.getElementById("f-system-choice");
  const systems = [{name: "karbon", title: "Karbon contest", column: "outcome"},
                   ...(await (await fetch("/api/systems")).json()).systems];   // by task, as the other games' page
  for (const system of systems) {
    const option = document.createElement("option");
    option.value = system.name; option.textContent = system.title;
    choice.appendChild(option);
  }
  async function showFields() {
    const main = document.getElementById("main-fields"), more = document.getElementById("more-fields");
    main.innerHTML = ""; more.innerHTML = "";
    const fields = await exactdice.fieldsOf(choice.value);
    exactdice.buildFields(main, fields, f => f.section === "");
    // a sample is tested against exact odds only: no bounds search here
    exactdice.buildFields(more, fields, f => f.section !== "" && f.name !== "max_seconds");
    more.closest("details").classList.toggle("hidden", !more.children.length);
    const column = document.getElementById("f-column");
    column.value = "";   // blank: the system's outcome column for the setup given
    column.placeholder = systems.find(s => s.name === choice.value).column;
    document.getElementById("answer").classList.add("hidden");
  }
  choice.addEventListener("change", async () => { form.dataset.ready = "no"; await showFields(); form.dataset.ready = "yes"; });
  await showFields();
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");

  function show(result) {
    const report = result.report;
    document.getElementById("answer").classList.remove("hidden");
    const verdict = document.getElementById("verdict");
    const columns = Object.entries(result.columns || {});
    if (columns.length > 1) {   // every column with a law, each at alpha / k, as `exactdice validate`
      const failed = columns.filter(([, r]) => !r.fits).map(([name]) => name);
      verdict.textContent = failed.length ? `does not fit: column(s) ${failed.join(", ")}`
                                          : `fits: all ${columns.length} columns`;
      verdict.className = `verdict ${result.fits ? "fits" : "misfit"}`;
    } else {
      verdict.textContent = report.verdict;
      verdict.className = `verdict ${report.fits ? "fits" : "misfit"}`;
    }
    const list = document.getElementById("columns");
    list.innerHTML = "";
    for (const [name, r] of columns.length > 1 ? columns : []) {
      const item = document.createElement("li");
      item.id = `column-${name}`;
      item.textContent = `column ${name}: ${r.verdict} (p = ${r.p_value.toPrecision(4)}, alpha ${r.alpha})`;
      list.appendChild(item);
    }
    document.getElementById("p-value").textContent = report.p_value.toPrecision(4);
    document.getElementById("test").textContent = report.test;
    document.getElementById("n").textContent = report.n.toLocaleString();
    document.getElementById("alpha-used").textContent = report.alpha;
    const body = document.querySelector("#rows tbody");
    body.innerHTML = "";
    for (const [name, row] of Object.entries(report.outcomes)) {
      const tr = document.createElement("tr");
      tr.id = `row-${name}`;
      tr.innerHTML = `<td>${name}</td><td>${row.observed}</td><td>${(100 * row.share).toFixed(2)}%</td>` +
        `<td title="${row.p}">${result.exact[name].shown}%</td>` +
        `<td>${row.expected.toFixed(1)}</td><td class="z">${row.z === null ? "\u2014" : (row.z >= 0 ? "+" : "") + row.z.toFixed(2)}</td>`;
      body.appendChild(tr);
    }
  }

  form.addEventListener("submit", async event => {
    event.preventDefault();
    exactdice.clearErrors(form);
    const values = exactdice.formValues(form);
    const file = document.getElementById("f-samples").files[0];
    values.samples = file ? await file.text() : "";
    values.column = document.getElementById("f-column").value;
    values.alpha = document.getElementById("f-alpha").value;
    status.textContent = "computing\u2026";
    document.getElementById("answer").classList.add("hidden");   // never the last answer beside new inputs
    const data = await exactdice.runJob(`/api/validate/${choice.value}`, values, cancelButton,
                                        text => { status.textContent = text; });
    if (data.status === "superseded") return;
    status.textContent = data.status === "cancelled" ? "cancelled" : "";
    if (data.status === "done") show(data.result);
    else if (data.status !== "cancelled") exactdice.showErrors(form, data.errors);
  });
  form.dataset.ready = "yes";
})();
