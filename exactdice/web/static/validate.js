// The Validate page: a CSV of simulated outcomes against the exact Karbon distribution.
"use strict";

(async () => {
  const form = document.getElementById("validate-form");
  const MAIN = ["ability", "challenge", "consequence", "peril", "fortune", "fallout", "training"];
  const fields = await exactdice.fieldsOf("karbon");
  exactdice.buildFields(document.getElementById("main-fields"), fields, f => MAIN.includes(f.name));
  exactdice.buildFields(document.getElementById("more-fields"), fields, f => !MAIN.includes(f.name));
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");
  let currentJob = null;

  function show(result) {
    const report = result.report;
    document.getElementById("answer").classList.remove("hidden");
    const verdict = document.getElementById("verdict");
    verdict.textContent = report.verdict;
    verdict.className = `verdict ${report.fits ? "fits" : "misfit"}`;
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
        `<td title="${row.p}">${result.exact[name === "unfinished" ? "never_ends" : name].percent}%</td>` +
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
    cancelButton.classList.remove("hidden");
    let {code, data} = await exactdice.postJSON("/api/validate/karbon", values);
    if (code !== 422) data = await exactdice.follow(data, (text, job) => { currentJob = job; status.textContent = text; });
    currentJob = null;
    cancelButton.classList.add("hidden");
    status.textContent = data.status === "cancelled" ? "cancelled" : "";
    if (data.status === "done") show(data.result);
    else if (data.status !== "cancelled") exactdice.showErrors(form, data.errors);
  });
  cancelButton.addEventListener("click", async () => {
    if (currentJob) await exactdice.cancel(currentJob);
  });
  form.dataset.ready = "yes";
})();
