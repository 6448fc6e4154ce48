// The dist page: an expression's exact distribution, with the at-least / at-most chart.
"use strict";

(async () => {
  const form = document.getElementById("dist-form");
  exactdice.buildFields(document.getElementById("dist-fields"), await exactdice.fieldsOf("dist"));
  let chart = null;
  let last = null;
  const LABELS = {at_least: "P(at least)", at_most: "P(at most)", p: "P(exactly)"};

  function draw() {
    if (!last) return;
    const view = form.querySelector("input[name=view]:checked").value;
    const usable = last.outcomes.filter(row => row[view]);
    const data = {labels: usable.map(row => row.outcome),
                  datasets: [{label: `${LABELS[view]} %`, data: usable.map(row => parseFloat(row[view].percent)),
                              backgroundColor: "#2d6fb7"}]};
    if (chart) chart.destroy();
    chart = new Chart(document.getElementById("chart"), {type: "bar", data,
      options: {animation: false, scales: {y: {beginAtZero: true, title: {display: true, text: "%"}}},
                plugins: {tooltip: {callbacks: {afterLabel: ctx => `exact ${usable[ctx.dataIndex][view].exact}`}}}}});
  }

  form.addEventListener("submit", async event => {
    event.preventDefault();
    exactdice.clearErrors(form);
    let {code, data} = await exactdice.postJSON("/api/dist", {expression: form.querySelector("#f-expression").value});
    if (code === 202) {   // a longer one runs in a worker: follow it to its end
      const last = await exactdice.follow(data, () => {});
      ({code, data} = last.status === "done" ? {code: 200, data: last.result} : {code: 422, data: last});
    }
    if (code !== 200) {   // the last answer must not sit under the new, bad expression
      document.getElementById("answer").classList.add("hidden");
      exactdice.showErrors(form, data.errors);
      return;
    }
    last = data;
    document.getElementById("answer").classList.remove("hidden");
    document.getElementById("summary").textContent =
      `${data.expression}: ${data.outcomes.length} outcomes` + (data.mean ? `, mean ${data.mean.exact} (${Number(data.mean.decimal).toFixed(4)})` : "");
    const body = document.querySelector("#outcomes tbody");
    body.innerHTML = "";
    for (const row of data.outcomes) {
      const tr = document.createElement("tr");
      const pct = value => value ? `${value.shown}%` : "";
      tr.innerHTML = `<td>${row.outcome}</td><td>${pct(row.p)}</td><td>${pct(row.at_least)}</td><td>${pct(row.at_most)}</td><td class="exactcell">${row.p.exact}</td>`;
      body.appendChild(tr);
    }
    draw();
  });
  for (const radio of form.querySelectorAll("input[name=view]")) radio.addEventListener("change", draw);
  form.dataset.ready = "yes";
})();
