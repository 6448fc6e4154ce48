// Shared by every page: forms built from the server's field list, requests, job polling,
// errors shown next to their fields. No build step: plain browser JavaScript.
"use strict";

const exactdice = (() => {
  // A server open to the network (exactdice serve --allow-remote) wants its token on every
  // API request: taken once from the link it printed (#token=...) or asked for, then kept.
  const TOKEN_KEY = "exactdice-token";
  const linked = new URLSearchParams(location.hash.slice(1)).get("token");
  if (linked) { localStorage.setItem(TOKEN_KEY, linked); history.replaceState(null, "", location.pathname + location.search); }
  const plainFetch = window.fetch.bind(window);
  window.fetch = async (url, options = {}) => {
    const api = String(url).startsWith("/api/");
    const send = () => {
      const token = localStorage.getItem(TOKEN_KEY);
      const headers = new Headers(options.headers || {});
      if (api && token) headers.set("X-Exactdice-Token", token);
      return plainFetch(url, {...options, headers});
    };
    let response = await send();
    if (api && response.status === 401) {
      const asked = window.prompt("This exactdice server is open to the network: its token " +
                                  "(printed where `exactdice serve` was started)");
      if (asked) { localStorage.setItem(TOKEN_KEY, asked.trim()); response = await send(); }
    }
    return response;
  };
  const withToken = url => {
    const token = localStorage.getItem(TOKEN_KEY);
    return token ? `${url}?token=${encodeURIComponent(token)}` : url;
  };

  async function fieldsOf(system) {
    const response = await fetch(`/api/fields/${system}`);
    return (await response.json()).fields;
  }

  // Build one control per field into `container` (a field's name is its id's suffix).
  // `examples`: start each control at its field's example where it has one (a page whose
  // first submit should answer); otherwise at its default (Validate: the values must match
  // the uploaded samples, so nothing is filled in for the user)
  function buildFields(container, fields, filter, examples = false) {
    for (const field of fields) {
      if (filter && !filter(field)) continue;
      container.appendChild(control(field, examples ? field.start : field.default));
    }
  }

  // Each field into the container of its section (`#fields-<section>` under `root`; the
  // first fields' section is ""); a section with no fields hides its <details>.
  function buildSections(root, fields, examples = false) {
    for (const box of root.querySelectorAll("[id^=fields-]")) box.innerHTML = "";
    for (const field of fields) {
      const box = root.querySelector(`#fields-${field.section}`) || root.querySelector("#fields-");
      box.appendChild(control(field, examples ? field.start : field.default));
    }
    for (const details of root.querySelectorAll("details")) {
      const filled = [...details.querySelectorAll("[id^=fields-]")].some(box => box.children.length);
      details.classList.toggle("hidden", !filled && !!details.querySelector("[id^=fields-]"));
    }
  }

  function control(field, start) {
    const box = document.createElement("div");
    box.className = "field" + (field.presets.length ? " preset-field" : "");
    box.id = `field-${field.name}`;
    const label = document.createElement("label");
    label.htmlFor = field.presets.length ? `f-${field.name}-preset` : `f-${field.name}`;
    label.textContent = field.label;
    label.title = field.help;
    const input = field.kind === "choice" ? select(field.choices.map(c => [c, c]), start) : document.createElement("input");
    if (field.kind === "int" || field.kind === "float") {
      input.type = field.kind === "int" ? "number" : "text";
      input.value = start === null ? "" : start;
    } else if (field.kind === "bool") {
      input.type = "checkbox";
      input.checked = !!start;
    } else if (field.kind !== "choice") {
      input.type = "text";
      input.value = start === null ? "" : start;
    }
    input.id = `f-${field.name}`;
    input.name = field.name;
    input.title = field.help;
    const error = document.createElement("span");
    error.className = "error";
    error.id = `err-${field.name}`;
    box.append(label);
    if (field.presets.length) box.append(presetChoice(field, input));
    box.append(input, error);
    return box;
  }

  function select(pairs, value) {
    const element = document.createElement("select");
    for (const [choice, words] of pairs) {
      const option = document.createElement("option");
      option.value = choice; option.textContent = words;
      element.appendChild(option);
    }
    element.value = value;
    return element;
  }

  // Common values in words, and "other..." for any other value typed in the box below
  // (the box always holds what is sent; it shows only for another value)
  function presetChoice(field, input) {
    const CUSTOM = "__other__";
    const known = field.presets.map(p => p.value);
    const choice = select([...field.presets.map(p => [p.value, p.words]), [CUSTOM, "other (type it below)"]], "");
    choice.id = `f-${field.name}-preset`;
    choice.title = field.help;
    const sync = () => {
      const custom = !known.includes(input.value);
      choice.value = custom ? CUSTOM : input.value;
      input.classList.toggle("hidden", !custom);
    };
    choice.addEventListener("change", () => {
      if (choice.value === CUSTOM) { input.classList.remove("hidden"); input.value = ""; input.focus(); }
      else { input.value = choice.value; input.classList.add("hidden"); }
    });
    input.addEventListener("change", sync);
    setTimeout(sync);
    return choice;
  }

  // The page's picture of a chart the library drew from exact values (a `Chart`'s JSON):
  // one line per curve at the points' percentages, the asked-about x marked; each point's
  // exact value in its tooltip. Returns the Chart.js chart (its data is what was plotted).
  function drawChart(canvas, chart) {
    const old = Chart.getChart(canvas);
    if (old) old.destroy();
    const COLOURS = ["#1f5fa8", "#c8553d", "#4f8a3c", "#7b4ea3", "#a3862e"];
    const number = y => parseFloat(chart.probability ? y.percent : y.value);
    const values = chart.curves.flatMap(curve => curve.points.map(p => number(p.y)));
    const scale = chart.probability && chart.full_scale ? {min: 0, max: 100}
      : {min: 0, max: chart.probability ? Math.min(100, 5 * Math.ceil((Math.max(...values) * 1.25 + 2) / 5)) : undefined};
    // each point's value written beside it, as `--plot` writes it (a what-if strip's few points)
    const labelled = !chart.label_points ? null : {
      id: "labels", afterDatasetsDraw(c) {
        c.ctx.save(); c.ctx.fillStyle = "#333"; c.ctx.textAlign = "center"; c.ctx.font = "11px sans-serif";
        c.data.datasets.forEach((dataset, i) => c.getDatasetMeta(i).data.forEach((point, j) => {
          const y = chart.curves[i].points[j].y;
          c.ctx.fillText(y.label, point.x, point.y - 8);
        }));
        c.ctx.restore();
      }};
    const marked = chart.marked_x === null ? null : {
      id: "marked", afterDraw(c) {
        const x = c.scales.x.getPixelForValue(chart.marked_x), {top, bottom} = c.chartArea;
        c.ctx.save(); c.ctx.strokeStyle = "#444"; c.ctx.setLineDash([3, 3]);
        c.ctx.beginPath(); c.ctx.moveTo(x, top); c.ctx.lineTo(x, bottom); c.ctx.stroke();
        c.ctx.fillStyle = "#444"; c.ctx.fillText(chart.marked_label, x + 3, top + 10); c.ctx.restore();
      }};
    return new Chart(canvas, {type: "line",
      data: {datasets: chart.curves.map((curve, i) => ({label: curve.label, borderColor: curve.colour || COLOURS[i % 5],
        backgroundColor: curve.colour || COLOURS[i % 5], stepped: chart.steps ? "before" : false, pointRadius: 3,
        data: curve.points.map(p => ({x: p.x, y: number(p.y)}))}))},
      options: {animation: false, parsing: false, layout: {padding: {left: 8, right: 24, top: 6}},
        scales: {x: {type: "linear", title: {display: true, text: chart.x_label},
                     ticks: {stepSize: 1, callback: v => chart.labels[v] || v}},
                 y: {title: {display: true, text: chart.y_label + (chart.probability ? " (%)" : "")}, ...scale}},
        plugins: {title: {display: !!chart.title, text: chart.title},
                  legend: {display: chart.curves.length > 1},
                  tooltip: {callbacks: {afterLabel: ctx => `exact ${chart.curves[ctx.datasetIndex].points[ctx.dataIndex].y.exact}`}}}},
      plugins: [marked, labelled].filter(Boolean)});
  }

  function formValues(form) {
    const values = {};
    for (const input of form.querySelectorAll("input[name], select[name]")) {
      if (input.type === "file") continue;
      values[input.name] = input.type === "checkbox" ? input.checked : input.value;
    }
    return values;
  }

  function clearErrors(root) {
    for (const span of root.querySelectorAll(".error")) span.textContent = "";
    for (const box of root.querySelectorAll(".field.invalid")) box.classList.remove("invalid");
  }

  // Show each message next to its field; one with no field goes to the form's own line.
  function showErrors(root, errors) {
    for (const [name, message] of Object.entries(errors || {})) {
      const span = root.querySelector(`#err-${name}`) || root.querySelector("#err-form");
      span.textContent = (span.textContent ? span.textContent + " " : "") + message;
      const box = root.querySelector(`#field-${name}`);
      if (box) {
        box.classList.add("invalid");
        const details = box.closest("details");
        if (details) details.open = true;
      }
    }
  }

  async function postJSON(url, body) {
    const response = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                                       body: JSON.stringify(body)});
    let data;
    try { data = await response.json(); } catch (e) { data = {status: "error", errors: {form: `server answered ${response.status}`}}; }
    return {code: response.status, data};
  }

  // Follow a job until it finishes; onProgress(text, jobId) as it runs. Returns the final JSON.
  async function follow(data, onProgress) {
    const job = data.job;
    if (job) followed.add(job);
    try {
      while (data.status === "queued" || data.status === "running") {
        if (onProgress) onProgress(data.progress, data.job);
        const response = await fetch(`/api/jobs/${data.job}?wait=1`);
        data = await response.json();
        if (response.status === 404) return {status: "error", errors: data.errors};
      }
      return data;
    } finally {
      followed.delete(job);
    }
  }

  // A page that is left can no longer show its jobs' answers: stop them, so they do not
  // hold a worker for the whole solve (a beacon still goes out while the page unloads).
  const followed = new Set();
  window.addEventListener("pagehide", () => {
    for (const job of followed) navigator.sendBeacon(withToken(`/api/jobs/${job}/cancel`));
  });

  async function cancel(jobId) {
    return postJSON(`/api/jobs/${jobId}/cancel`, {});
  }

  // Post a job and follow it to its end, showing `cancelButton` meanwhile: Cancel stops it
  // at any moment, also before the server's reply has named it (onProgress("cancelled") at
  // once), and so does a new run with the same button (the older run then answers
  // {status: "superseded"}, to be ignored). Returns the final JSON; a 422's errors as they came.
  async function runJob(url, body, cancelButton, onProgress) {
    if (cancelButton.stopJob) cancelButton.stopJob("superseded");
    let job = null, stopped = null;
    const stop = (why = "cancelled") => {
      stopped = why;
      if (job) cancel(job);
      if (why === "cancelled") { cancelButton.classList.add("hidden"); onProgress("cancelled"); }
    };
    cancelButton.stopJob = stop;
    cancelButton.onclick = () => stop();
    cancelButton.classList.remove("hidden");
    try {
      const {code, data} = await postJSON(url, body);
      if (code === 422) return stopped ? {status: stopped} : data;
      job = data.job;
      if (stopped && job) cancel(job);
      const last = stopped ? {status: stopped} : await follow(data, text => { if (!stopped) onProgress(text); });
      return stopped === "superseded" ? {status: stopped} : last;
    } finally {
      if (cancelButton.stopJob === stop) {
        cancelButton.stopJob = null;
        cancelButton.classList.add("hidden");
      }
    }
  }

  function copyText(text, button) {
    const done = () => { if (button) { const old = button.textContent; button.textContent = "copied"; setTimeout(() => button.textContent = old, 1200); } };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, done);
    } else {
      const area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      try { document.execCommand("copy"); } catch (e) { /* nothing to do */ }
      area.remove(); done();
    }
  }

  return {fieldsOf, buildFields, buildSections, drawChart, formValues, clearErrors, showErrors, postJSON, follow,
          cancel, runJob, copyText};
})();
