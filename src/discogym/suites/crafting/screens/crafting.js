// The crafting suite's screen (Plancraft): the crafting GUI's picture with a box over each slot. Click a slot,
// then another: a `move` of as many items as the quantity box says (or a `smelt`, after pressing "smelt").
// A search box and an "impossible" button make the other two calls; controls of tools the condition lacks are
// not shown. With api === null (a replay) the screen only draws the view.
"use strict";

window.discogymScreens = window.discogymScreens || {};

window.discogymScreens.crafting = (root, view, api) => {
  const make = (tag, props = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), props);
    node.append(...children);
    return node;
  };
  const has = (name) => (view.tools || []).includes(name);
  const describe = (slot) => slot.name + " " + (slot.item ? slot.quantity + " " + slot.item : "empty");

  root.replaceChildren();
  root.classList.add("crafting");
  const objective = make("p", { className: "crafting-objective" });
  const picture = make("img", { alt: "the crafting table" });
  const board = make("div", { className: "crafting-board" }, picture);
  root.append(objective, board);

  // One box per slot, placed over the picture in percent so the picture may scale.
  const boxes = new Map();
  for (const slot of view.slots) {
    const box = make(api ? "button" : "div", { className: "crafting-slot" });
    if (api) box.type = "button";
    box.dataset.slot = slot.name;
    Object.assign(box.style, {
      left: (100 * slot.x) / view.width + "%",
      top: (100 * slot.y) / view.height + "%",
      width: (100 * slot.size) / view.width + "%",
      height: (100 * slot.size) / view.height + "%",
    });
    boxes.set(slot.name, box);
    board.append(box);
  }

  function draw(shown) {
    view = shown;
    objective.textContent = shown.objective;
    picture.src = shown.picture;
    picture.width = shown.width;
    picture.height = shown.height;
    for (const slot of shown.slots) {
      const box = boxes.get(slot.name);
      if (!box) continue;
      box.title = describe(slot);
      box.setAttribute("aria-label", describe(slot));
      box.dataset.item = slot.item || "";
    }
  }

  draw(view);
  if (!api) return { update: draw, finished() {} };

  // Controls
  const quantity = make("input", { id: "crafting-quantity", type: "number", min: 1, max: 64, step: 1, value: 1 });
  const smelt = make("button", { id: "crafting-smelt", type: "button", textContent: "smelt" });
  smelt.title = "the next slot-to-slot pair smelts instead of moving";
  const hint = make("p", { id: "crafting-hint", className: "crafting-hint" });
  const controls = make("div", { className: "crafting-controls" });
  controls.append(make("label", {}, "quantity ", quantity));
  if (has("smelt")) controls.append(smelt);
  controls.append(hint);

  const search = make("input", { id: "crafting-search", type: "text", placeholder: "an item, e.g. oak_planks" });
  const searchButton = make("button", { type: "submit", textContent: "search recipes" });
  const searchForm = make("form", { className: "crafting-search" }, search, searchButton);
  if (has("search")) controls.append(searchForm);

  const reason = make("input", { id: "crafting-reason", type: "text", placeholder: "why (optional)" });
  const impossibleButton = make("button", { id: "crafting-impossible", type: "submit" });
  impossibleButton.textContent = "impossible (ends the game)";
  const impossibleForm = make("form", { className: "crafting-impossible" }, reason, impossibleButton);
  if (has("impossible")) controls.append(impossibleForm);
  root.append(controls);

  let source = null; // the slot clicked first
  let smelting = false; // the next pair is a smelt
  let busy = false; // a call is on its way
  let over = false;

  const slotOf = (name) => view.slots.find((slot) => slot.name === name) || { name };

  function refresh(message) {
    for (const [name, box] of boxes) box.classList.toggle("selected", name === source);
    smelt.setAttribute("aria-pressed", String(smelting));
    smelt.classList.toggle("on", smelting);
    const action = smelting ? "smelt" : "move";
    let text = `Click the slot to ${action} from, then the slot to ${action} to.`;
    if (source) text = `${action} from ${describe(slotOf(source))}: click the slot to ${action} to (Esc cancels).`;
    if (over) text = "The game is over.";
    hint.textContent = message || text;
  }

  // A call; the controls wait for its answer (the page logs it and redraws the screen).
  async function send(tool, args) {
    busy = true;
    root.dataset.busy = "true";
    try {
      return await api.call(tool, args);
    } catch {
      return null; // the page's status line says why
    } finally {
      busy = false;
      delete root.dataset.busy;
    }
  }

  async function clicked(name) {
    if (busy || over || api.isOver()) return;
    if (source === null) {
      source = name;
      return refresh();
    }
    if (source === name) {
      source = null;
      return refresh();
    }
    const wanted = Number(quantity.value);
    if (quantity.value.trim() === "" || !Number.isInteger(wanted)) {
      return refresh("The quantity is a whole number (1 to 64).");
    }
    const tool = smelting ? "smelt" : "move";
    const args = { slot_from: source, slot_to: name, quantity: wanted };
    source = null;
    smelting = false;
    refresh();
    await send(tool, args);
  }

  for (const [name, box] of boxes) box.addEventListener("click", () => clicked(name));
  smelt.addEventListener("click", () => {
    smelting = !smelting;
    refresh();
  });
  root.ownerDocument.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && source !== null) {
      source = null;
      refresh();
    }
  });
  searchForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy || over) return;
    const answer = await send("search", { item: search.value.trim() });
    if (answer) search.value = "";
  });
  impossibleForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy || over) return;
    send("impossible", { reason: reason.value.trim() });
  });

  refresh();
  return {
    update(shown) {
      draw(shown);
      refresh();
    },
    finished() {
      over = true;
      source = null;
      smelting = false;
      for (const control of root.querySelectorAll("button, input")) control.disabled = true;
      refresh();
    },
  };
};
