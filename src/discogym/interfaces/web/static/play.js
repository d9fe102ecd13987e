// The play page: one form per tool, built from its JSON schema; each call goes to the server, which runs it in
// the episode and answers with what an agent would read.
"use strict";

const tools = JSON.parse(document.getElementById("tools-data").textContent);
const { token: PLAY_TOKEN, over: PLAY_OVER, written: PLAY_WRITTEN, mode: PLAY_MODE, api, next } = JSON.parse(
  document.getElementById("game-data").textContent,
);
// A game's calls go to /api/play/TOKEN, or in a study to the participant's own address (api), and the page
// then leads on to the participant's next step (next).
const API = api || `/api/play/${PLAY_TOKEN}`;
const log = document.getElementById("log");
const status = document.getElementById("status");
let screen = null; // the suite's screen, once mounted

// An optional argument's schema is often "anyOf: [the type, null]": the form asks for the type.
function plain(schema) {
  const kinds = (schema.anyOf || []).filter((s) => s.type !== "null");
  return kinds.length === 1 ? { ...kinds[0], description: schema.description } : schema;
}

function field(name, given, required) {
  const schema = plain(given);
  const label = document.createElement("label");
  label.textContent = name + (required ? " " : " (optional) ");
  let input;
  const options = schema.enum || (schema.anyOf || []).flatMap((s) => s.enum || []);
  if (options.length) {
    input = document.createElement("select");
    if (!required) input.append(new Option("", ""));
    for (const value of options) input.append(new Option(String(value), JSON.stringify(value)));
    input.dataset.kind = "json";
  } else if (schema.type === "integer" || schema.type === "number") {
    input = document.createElement("input");
    input.type = "number";
    input.dataset.kind = "number";
  } else if (schema.type === "boolean") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.dataset.kind = "boolean";
  } else if (schema.type === "string") {
    input = document.createElement("input");
    input.type = "text";
    input.dataset.kind = "text";
  } else {
    input = document.createElement("textarea");
    input.rows = 2;
    input.placeholder = "JSON";
    input.dataset.kind = "json";
  }
  input.name = name;
  if (schema.description) input.title = schema.description;
  label.append(input);
  return label;
}

function readArgs(form) {
  const args = {};
  for (const input of form.querySelectorAll("[name]")) {
    const kind = input.dataset.kind;
    if (kind === "boolean") {
      args[input.name] = input.checked;
    } else if (input.value === "") {
      continue;
    } else if (kind === "number") {
      args[input.name] = Number(input.value);
    } else if (kind === "json") {
      try { args[input.name] = JSON.parse(input.value); } catch { args[input.name] = input.value; }
    } else {
      args[input.name] = input.value;
    }
  }
  return args;
}

function show(tool, args, answer) {
  const item = document.createElement("li");
  if (!answer.ok) item.className = "refused";
  const call = document.createElement("code");
  call.textContent = tool + " " + JSON.stringify(args);
  const text = document.createElement("pre");
  text.textContent = answer.text;
  item.append(call, text);
  for (const src of answer.images || []) {
    const image = document.createElement("img");
    image.src = src;
    image.alt = "what the call showed";
    item.append(image);
  }
  log.append(item);
  log.scrollTop = log.scrollHeight; // the log scrolls in its own box: the page (and a screen) stays put
}

function finished(written, saved) {
  for (const control of document.querySelectorAll("form.tool button, #end")) control.disabled = true;
  status.textContent = "The game is over." + (written ? " Its episode was written: " + written : "");
  document.body.dataset.over = "true";
  if (screen) screen.finished();
  if (next) leadOn(saved);
}

// In a study: say once the game is saved (a server that could not write it yet keeps it and tries again), then
// offer the way on.
async function leadOn(saved) {
  while (saved === false) {
    status.textContent = "The game is over. Saving it: keep this page open.";
    await new Promise((resolve) => setTimeout(resolve, 1000));
    try {
      saved = (await (await fetch(`${API}/saved`)).json()).saved;
    } catch {
      saved = false;
    }
  }
  status.textContent = "The game is over and saved. ";
  const onward = document.createElement("a");
  onward.id = "continue";
  onward.href = next;
  onward.textContent = "Continue";
  status.append(onward);
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || answer.detail || response.statusText);
  return answer;
}

// One tool call in the episode, from a form or a screen: logged on the page, the screen redrawn. A refusal of
// the server (the game is over, a malformed request) shows in the status line and rejects. Calls go one at a
// time, in the order they were made: a second waits for the first's answer (the server answers only a few of a
// participant's calls at once, and two moves must not overtake each other).
let previousCall = Promise.resolve();

function call(tool, args) {
  const made = previousCall.then(() => callNow(tool, args));
  previousCall = made.catch(() => {});
  return made;
}

async function callNow(tool, args) {
  try {
    const answer = await post(`${API}/call`, { tool, args });
    show(tool, args, answer);
    if (screen && answer.view) screen.update(answer.view);
    if (answer.over) finished(answer.written, answer.saved);
    return answer;
  } catch (error) {
    status.textContent = String(error.message || error);
    throw error;
  }
}

for (const step of JSON.parse(document.getElementById("history-data").textContent)) {
  show(step.tool, step.args, step);
}

for (const tool of tools) {
  const form = document.createElement("form");
  form.className = "tool";
  form.id = "tool-" + tool.name;
  const title = document.createElement("h3");
  title.textContent = tool.name;
  const about = document.createElement("p");
  about.textContent = tool.description;
  form.append(title, about);
  const properties = (tool.parameters && tool.parameters.properties) || {};
  const required = new Set((tool.parameters && tool.parameters.required) || []);
  for (const [name, schema] of Object.entries(properties)) form.append(field(name, schema, required.has(name)));
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = tool.name;
  form.append(button);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    call(tool.name, readArgs(form)).catch(() => {});
  });
  document.getElementById("tools").append(form);
}

document.getElementById("end").addEventListener("click", async () => {
  try {
    const answer = await post(`${API}/end`, {});
    finished(answer.written, answer.saved);
  } catch (error) {
    status.textContent = String(error.message || error);
  }
});

// The suite's screen (screen-loader.js), when the environment has a view.
const firstView = JSON.parse(document.getElementById("view-data").textContent);
const screenRoot = document.getElementById("screen");

function mountScreen(mount) {
  if (!mount) {
    screenRoot.textContent = "This page has no screen for " + firstView.kind + ": use the forms.";
    document.getElementById("forms").open = true;
  } else {
    const api = { call, tools, mode: PLAY_MODE, isOver: () => document.body.dataset.over === "true" };
    screen = mount(screenRoot, firstView, api);
    screenRoot.dataset.ready = "true";
  }
  if (PLAY_OVER) finished(PLAY_WRITTEN, next ? false : undefined);
}

if (firstView && firstView.kind === "error") {
  screenRoot.textContent = firstView.message;
  screenRoot.className = "screen error";
  document.getElementById("forms").open = true;
  if (PLAY_OVER) finished(PLAY_WRITTEN, next ? false : undefined);
} else if (firstView) {
  loadScreen(firstView.kind).then(mountScreen);
} else if (PLAY_OVER) {
  finished(PLAY_WRITTEN, next ? false : undefined); // in a study: ask the server whether it is saved
}
