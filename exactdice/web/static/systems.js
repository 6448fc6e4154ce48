// Contingency, Chronica and Karst: each computation's form (from the server's field list)
// and its exact outcome distribution as a chart and a table.
"use strict";

(async () => {
  const form = document.getElementById("system-form");
  const choice = document.getElementById("f-system-choice");
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");
  const systems = (await (await fetch("/api/systems")).json()).systems;
  for (const system of systems) {
    const option = document.createElement("option");
    option.value = system.name; option.textContent = system.title;
    choice.appendChild(option);
  }
  const wanted = new URLSearchParams(location.search).get("system");
  if (wanted) choice.value = wanted;
  let chart = null;

  async function showFields() {
    const container = document.getElementById("system-fields");
    container.innerHTML = "";
    exactdice.buildFields(container, await exactdice.fieldsOf(choice.value), null, true);
    document.getElementById("answer").classList.add("hidden");
    exactdice.clearErrors(form);
  }

  function show(result) {
    const system = systems.find(s => s.name === choice.value);
    document.getElementById("answer").classList.remove("hidden");
    document.getElementById("summary").textContent = `${system.title}: the chance of each outcome`;
    const body = document.querySelector("#outcomes tbody");
    body.innerHTML = "";
    for (const row of result.outcomes) {
      const tr = document.createElement("tr");
      tr.id = `outcome-${row.outcome}`;
      tr.innerHTML = `<td>${row.words}</td><td class="pct">${row.p.shown}%</td><td class="exactcell">${row.p.exact}</td>` +
        `<td><button type="button">copy</button></td>`;
      tr.querySelector("button").onclick = event => exactdice.copyText(row.p.exact, event.target);
      body.appendChild(tr);
    }
    if (chart) chart.destroy();
    chart = new Chart(document.getElementById("chart"), {type: "bar",
      data: {labels: result.outcomes.map(r => r.words),
             datasets: [{label: "chance (%)", data: result.outcomes.map(r => parseFloat(r.p.percent)), backgroundColor: "#2d6fb7"}]},
      options: {animation: false, indexAxis: "y", scales: {x: {beginAtZero: true, max: 100}},
                plugins: {legend: {display: false},
                          tooltip: {callbacks: {afterLabel: ctx => `exact ${result.outcomes[ctx.dataIndex].p.exact}`}}}}});
    // a check's chance against difficulty (or an attack's against defense), as `--plot` draws it
    const chance = result.charts.chance;
    document.getElementById("chance-box").classList.toggle("hidden", !chance);
    if (chance) {
      document.getElementById("chance-title").textContent = `${chance.y_label} by ${chance.x_label}`;
      exactdice.drawChart(document.getElementById("chance-chart"), chance);
      document.getElementById("chance-note").textContent = chance.note;
    }
  }

  form.addEventListener("submit", async event => {
    event.preventDefault();
    exactdice.clearErrors(form);
    status.textContent = "computing\u2026";
    document.getElementById("answer").classList.add("hidden");   // never the last answer beside new inputs
    const data = await exactdice.runJob(`/api/exact/${choice.value}`, exactdice.formValues(form), cancelButton,
                                        text => { status.textContent = text; });
    if (data.status === "superseded") return;
    status.textContent = data.status === "cancelled" ? "cancelled" : (data.cached ? "answered from the results store" : "");
    if (data.status === "done") show(data.result);
    else if (data.status !== "cancelled") exactdice.showErrors(form, data.errors);
  });
  // each computation answers as it opens (its example values; they are quick to compute)
  choice.addEventListener("change", async () => {
    form.dataset.ready = "no"; await showFields(); form.dataset.ready = "yes"; form.requestSubmit();
  });
  await showFields();
  form.dataset.ready = "yes";
  form.requestSubmit();
})();
