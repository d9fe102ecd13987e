// The episode replay: one step at a time, with the agent's message, its call, the result and its pictures;
// arrows, the slider and the buttons move back and forth.
"use strict";

const steps = JSON.parse(document.getElementById("steps-data").textContent);
const VIEWS_URL = JSON.parse(document.getElementById("views-url").textContent);
const slider = document.getElementById("slider");
const view = document.getElementById("step");
const position = document.getElementById("position");

// A compaction (older turns replaced by the model's summary) or a use of the notes, on the way to the step.
function memoryEntry(entry) {
  const box = document.createElement("details");
  box.className = "memory";
  const summary = document.createElement("summary");
  if (entry.kind === "compaction") {
    summary.textContent = "compaction: " + entry.replaced_turns + " older turns replaced by a summary" +
      (entry.tokens === null ? "" : " (" + entry.tokens + " tokens)");
  } else {
    summary.textContent = "notes: " + entry.action;
  }
  const text = document.createElement("pre");
  text.textContent = entry.text;
  box.append(summary, text);
  return box;
}

function render(step, into) {
  const head = document.createElement("h2");
  head.textContent = "Step " + step.step + (step.tokens === null ? "" : " (" + step.tokens + " tokens)");
  into.append(head);
  for (const entry of step.memory || []) into.append(memoryEntry(entry));
  if (step.message) {
    const message = document.createElement("pre");
    message.className = "message";
    message.textContent = step.message;
    into.append(message);
  }
  const call = document.createElement("p");
  call.className = "call";
  call.textContent = step.tool + " " + JSON.stringify(step.args);
  const result = document.createElement("pre");
  result.textContent = (step.ok ? "" : "refused: ") + step.text;
  into.append(call, result);
  for (const src of step.images) {
    const image = document.createElement("img");
    image.src = src;
    image.alt = "what the agent was shown";
    into.append(image);
  }
  if (step.session) {
    const box = document.createElement("details");
    box.className = "session";
    const summary = document.createElement("summary");
    summary.textContent = step.session.role + " session: " + step.session.steps.length + " steps, ended " + step.session.termination;
    box.append(summary);
    for (const inner of step.session.steps) render(inner, box);
    into.append(box);
  }
}

// The suite's screen, drawing the view after the step shown (replayed by the server; fetched after the page shows).
let screen = null;
let views = [];

// The server sends each picture once: {picture: N} stands for pictures[N].
function withPictures(value, pictures) {
  if (Array.isArray(value)) return value.map((item) => withPictures(item, pictures));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "picture" && typeof value.picture === "number") return pictures[value.picture];
  return Object.fromEntries(keys.map((key) => [key, withPictures(value[key], pictures)]));
}

async function showViews() {
  const note = document.getElementById("screen-note");
  try {
    const response = await fetch(VIEWS_URL);
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
    views = answer.views.map((shown) => withPictures(shown, answer.pictures));
    if (answer.stopped) note.textContent = answer.stopped;
    if (!views.length || !views[0]) return;
    const mount = await loadScreen(views[0].kind);
    if (!mount) return;
    const root = document.getElementById("screen");
    root.hidden = false;
    screen = mount(root, views[Number(slider.value)] || views[0], null);
    root.dataset.ready = "true";
  } catch (error) {
    note.textContent = "No pictures of the steps: " + String(error.message || error);
  }
}

function go(index) {
  if (!steps.length) {
    view.textContent = "This episode has no steps.";
    return;
  }
  const at = Math.min(Math.max(index, 1), steps.length);
  slider.value = at;
  position.textContent = at + " / " + steps.length;
  view.replaceChildren();
  render(steps[at - 1], view);
  const shown = views[at];
  const root = document.getElementById("screen");
  if (screen && shown) screen.update(shown);
  root.hidden = !(screen && shown);
}

slider.addEventListener("input", () => go(Number(slider.value)));
document.getElementById("first").addEventListener("click", () => go(1));
document.getElementById("prev").addEventListener("click", () => go(Number(slider.value) - 1));
document.getElementById("next").addEventListener("click", () => go(Number(slider.value) + 1));
document.getElementById("last").addEventListener("click", () => go(steps.length));
document.addEventListener("keydown", (event) => {
  if (event.key === "ArrowRight") go(Number(slider.value) + 1);
  if (event.key === "ArrowLeft") go(Number(slider.value) - 1);
});
go(1);
showViews();
