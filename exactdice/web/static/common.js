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
      const box = document.createElement("div");
      box.className = "field";
      box.id = `field-${field.name}`;
      const label = document.createElement("label");
      label.htmlFor = `f-${field.name}`;
      label.textContent = field.label;
      label.title = field.help;
      let input;
      const start = examples ? field.start : field.default;
      if (field.kind === "choice") {
        input = document.createElement("select");
        for (const choice of field.choices) {
          const option = document.createElement("option");
          option.value = option.textContent = choice;
          input.appendChild(option);
        }
        input.value = start;
      } else {
        input = document.createElement("input");
        if (field.kind === "int" || field.kind === "float") {
          input.type = field.kind === "int" ? "number" : "text";
          input.value = start === null ? "" : start;
        } else if (field.kind === "bool") {
          input.type = "checkbox";
          input.checked = !!start;
        } else {
          input.type = "text";
          input.value = start === null ? "" : start;
        }
      }
      input.id = `f-${field.name}`;
      input.name = field.name;
      input.title = field.help;
      const error = document.createElement("span");
      error.className = "error";
      error.id = `err-${field.name}`;
      box.append(label, input, error);
      container.appendChild(box);
    }
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

  return {fieldsOf, buildFields, formValues, clearErrors, showErrors, postJSON, follow, cancel, runJob, copyText};
})();
