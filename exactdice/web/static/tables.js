// The canonical tables as heatmaps: hover a cell for its exact value.
"use strict";

(async () => {
  const form = document.getElementById("tables-form");
  const fileChoice = document.getElementById("f-table");
  const partChoice = document.getElementById("f-part");
  const metricChoice = document.getElementById("f-metric");
  document.getElementById("print-table").onclick = () => window.print();
  const listing = await (await fetch("/api/tables")).json(), names = listing.tables;
  let data = null;
  for (const name of names) {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = listing.titles[name] || name;
    fileChoice.appendChild(option);
  }
  if (!names.length) document.getElementById("err-table").textContent = "no canonical tables found (the package was installed without them)";

  function fill(select, labels) {
    select.innerHTML = "";
    labels.forEach((label, index) => {
      const option = document.createElement("option");
      option.value = index; option.textContent = label;
      select.appendChild(option);
    });
  }

  function colour(share) {  // white to blue
    const light = Math.round(255 - 150 * share), mid = Math.round(255 - 90 * share);
    return `rgb(${light}, ${mid}, 255)`;
  }

  // certified bounds the server calls wide are not shaded (by their lower bound a cell
  // would look hopeless where its value is simply not known yet): they are hatched grey
  const UNKNOWN = "repeating-linear-gradient(45deg, #e4e4e4 0 4px, #f7f7f7 4px 8px)";
  const tooWide = cell => cell.wide === true;

  function draw() {
    const table = data.tables[Number(partChoice.value)];
    const metric = table.metrics[Number(metricChoice.value)];
    document.getElementById("table-title").textContent = table.title;
    heatmap(document.getElementById("heatmap"), table, metric, "cell");
    document.getElementById("legend").textContent =
      Object.entries(table.legend).map(([k, v]) => `${k}: ${v}`).join("; ") + ". Hover a cell for its exact value." +
      (metric.cells.flat().some(c => c && tooWide(c))
        ? ` Hatched: certified bounds more than ${data.wide_bounds} apart, not shaded.` : "");
  }

  function heatmap(grid, table, metric, prefix) {
    const values = metric.cells.flat().filter(c => c && !tooWide(c))
      .map(c => parseFloat(metric.probability ? c.percent : c.value));
    const low = Math.min(...values), high = Math.max(...values);
    grid.innerHTML = "";
    const head = document.createElement("tr");
    head.innerHTML = `<th>${table.row_label} \\ ${table.column_label}</th>` + table.columns.map(c => `<th>${c}</th>`).join("");
    grid.appendChild(head);
    table.rows.forEach((row, r) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th"); th.textContent = row; tr.appendChild(th);
      metric.cells[r].forEach((cell, c) => {
        const td = document.createElement("td");
        td.id = `${prefix}-${r}-${c}`;
        if (cell) {
          const shown = metric.probability ? `${cell.shown || cell.percent}%` : cell.value;
          const number = parseFloat(metric.probability ? cell.percent : cell.value);
          td.textContent = shown;
          td.title = `${metric.name} at ${table.row_label} ${row}, ${table.column_label} ${table.columns[c]}: ${cell.exact}`;
          if (tooWide(cell)) {
            td.title += " (bounds too far apart to shade: the value is not known closely enough yet)";
            td.style.background = UNKNOWN;
          } else {
            td.style.background = colour(high > low ? (number - low) / (high - low) : 0.5);
          }
        }
        tr.appendChild(td);
      });
      grid.appendChild(tr);
    });
  }

  async function load() {
    if (!fileChoice.value) return;
    data = await (await fetch(`/api/tables/${fileChoice.value}`)).json();
    fill(partChoice, data.tables.map(t => t.title));
    partChoice.onchange();
  }
  partChoice.onchange = () => { fill(metricChoice, data.tables[Number(partChoice.value)].metrics.map(m => m.name)); draw(); };
  metricChoice.onchange = draw;
  fileChoice.onchange = async () => { form.dataset.ready = "no"; await load(); form.dataset.ready = "yes"; };
  const wanted = new URLSearchParams(location.search).get("table");
  if (wanted && names.includes(wanted)) fileChoice.value = wanted;
  await load();
  form.dataset.ready = "yes";

  // ----- a new grid, solved in the background with progress -----
  const gridForm = document.getElementById("grid-form");
  const AXES = ["row_axis", "row_values", "column_axis", "column_values"];
  const gridFields = await exactdice.fieldsOf("karbon-grid");
  exactdice.buildFields(document.getElementById("grid-axes"), gridFields, f => AXES.includes(f.name), true);
  exactdice.buildFields(document.getElementById("grid-more"), gridFields, f => !AXES.includes(f.name), true);
  const status = document.getElementById("status");
  const cancelButton = document.getElementById("cancel");
  const gridMetric = document.getElementById("grid-metric");
  let grid = null;

  // what the grid holds fixed, in the form's words (the rule knobs only where they differ)
  function caption(values) {
    const label = name => gridFields.find(f => f.name === name).label;
    const kept = gridFields.filter(f => !AXES.includes(f.name) && f.name !== values.row_axis &&
                                      f.name !== values.column_axis &&
                                      (!f.name.startsWith("rule_") || values[f.name] !== f.default));
    return `${label(values.row_axis)} (rows) x ${label(values.column_axis)} (columns); ` +
      kept.filter(f => f.kind !== "bool" || values[f.name]).map(f => f.kind === "bool" ? f.label : `${f.label} ${values[f.name]}`).join(", ");
  }

  function drawGrid() {
    heatmap(document.getElementById("grid-heatmap"), grid, grid.metrics[Number(gridMetric.value)], "grid-cell");
  }
  gridMetric.onchange = drawGrid;

  gridForm.addEventListener("submit", async event => {
    event.preventDefault();
    exactdice.clearErrors(gridForm);
    const values = exactdice.formValues(gridForm);
    status.textContent = "computing\u2026";
    document.getElementById("grid-answer").classList.add("hidden");   // never the last grid beside new inputs
    const data = await exactdice.runJob("/api/karbon/grid", values, cancelButton, text => { status.textContent = text; });
    if (data.status === "superseded") return;
    status.textContent = data.status === "cancelled" ? "cancelled" : (data.cached ? "answered from the results store" : "");
    if (data.status !== "done") { if (data.status !== "cancelled") exactdice.showErrors(gridForm, data.errors); return; }
    grid = data.result;
    fill(gridMetric, grid.metrics.map(m => m.name));
    gridMetric.classList.remove("hidden");
    document.getElementById("grid-metric-label").classList.remove("hidden");
    document.getElementById("grid-answer").classList.remove("hidden");
    document.getElementById("grid-caption").textContent = caption(values);
    drawGrid();
  });
  gridForm.dataset.ready = "yes";
})();
