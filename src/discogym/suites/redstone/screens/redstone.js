// The redstone screen (SciCrafter): the build region one y layer at a time, the 3D picture of the device, and the
// agent's actions. Click a cell of the layer to place the chosen palette block there (set_block x y z block
// properties), or air in remove mode; press the button (activate_button), read the events since the last press
// (get_event_stream since), submit. With api null (a replay) it only draws the view.
"use strict";

(function () {
  const AIR = "minecraft:air";

  function make(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, attributes || {});
    node.append(...children);
    return node;
  }

  function mount(root, first, api) {
    let view = first;
    let layerY = first.layers.length ? first.layers[0].y : null;
    let busy = false;
    const controls = []; // disabled when the game ends

    root.replaceChildren();
    const box = make("div", { className: "rs" });
    const status = make("p", { className: "rs-status" });
    const layerSelect = make("select", { className: "rs-layer-choice", title: "the y layer shown (and built on)" });
    const layerPicture = make("img", { className: "rs-layer-picture", alt: "the build region's layer, from above" });
    const hover = make("p", { className: "rs-hover note" }, "\u00a0");
    const isoPicture = make("img", { className: "rs-iso-picture", alt: "the device in 3D" });
    const isoEmpty = make("p", { className: "note" }, "Nothing built yet.");
    const layerFigure = make(
      "figure",
      { className: "rs-layer" },
      make("label", {}, "Layer ", layerSelect),
      layerPicture,
      hover,
    );
    const isoFigure = make(
      "figure",
      { className: "rs-iso" },
      make("figcaption", {}, "3D, seen from above the south-east corner (east down-right, south down-left)"),
      isoPicture,
      isoEmpty,
    );
    layerFigure.style.maxWidth = first.grid.width + "px"; // the hover line wraps under the picture
    const side = make("div", { className: "rs-side" }, isoFigure);
    box.append(status, make("div", { className: "rs-views" }, layerFigure, side));
    root.append(box);

    // The controls (none in a replay).
    let chosen = null; // the palette entry to place, or null in remove mode
    const propertyBox = make("div", { className: "rs-properties" });
    const message = make("p", { className: "rs-message" });
    const output = make("pre", { className: "rs-output" });
    const pressButton = make("button", { type: "button", className: "rs-press" }, "Press the button");
    const eventsButton = make("button", { type: "button", className: "rs-events" }, "Events since the last press");
    const submitButton = make("button", { type: "button", className: "rs-submit" }, "Submit the device (ends the game)");
    if (api) {
      const palette = make("fieldset", { className: "rs-palette" }, make("legend", {}, "Click a cell to place"));
      const choose = (entry) => {
        chosen = entry;
        propertyBox.replaceChildren();
        if (!entry) {
          propertyBox.append(make("p", { className: "note" }, "Remove mode: a click puts air in the cell."));
          return;
        }
        for (const [name, values] of Object.entries(entry.properties)) {
          const select = make("select", { name });
          for (const value of values) select.append(new Option(value, value));
          select.dataset.property = name;
          controls.push(select);
          propertyBox.append(make("label", {}, name + " ", select));
        }
        if (entry.note) propertyBox.append(make("p", { className: "note" }, entry.note));
      };
      const option = (value, label, swatch, entry) => {
        const radio = make("input", { type: "radio", name: "rs-block", value });
        radio.addEventListener("change", () => choose(entry));
        controls.push(radio);
        const mark = make("span", { className: "rs-swatch" });
        if (swatch) mark.style.background = swatch;
        palette.append(make("label", {}, radio, mark, label));
        return radio;
      };
      first.palette.forEach((entry, i) => {
        const radio = option(entry.block, entry.name, entry.colour, entry);
        if (i === 0) radio.checked = true;
      });
      option(AIR, "remove (air)", null, null);
      choose(first.palette[0] || null);
      pressButton.addEventListener("click", () => act("activate_button", {}));
      eventsButton.addEventListener("click", () => act("get_event_stream", { since: view.last_press ?? 0 }));
      submitButton.addEventListener("click", () => act("submit", {}));
      controls.push(pressButton, eventsButton, submitButton);
      const actions = make("div", { className: "rs-actions" }, pressButton, eventsButton, submitButton);
      side.append(make("div", { className: "rs-tools" }, palette, propertyBox, actions), message, output);
    }

    function say(text, refused) {
      message.textContent = text;
      message.classList.toggle("rs-refused", Boolean(refused));
    }

    function act(tool, args) {
      if (!api || busy || api.isOver()) return;
      busy = true;
      api
        .call(tool, args)
        .then((answer) => {
          if (tool === "set_block") say(answer.text, !answer.ok);
          else {
            say(answer.ok ? "" : answer.text, !answer.ok);
            if (answer.ok) output.textContent = answer.text;
          }
        })
        .catch((error) => say(String(error.message || error), true)) // also in the page's status line
        .finally(() => { busy = false; });
    }

    // The cell under a mouse event, or null outside the grid (the labels, the title).
    function cellAt(event) {
      const grid = view.grid;
      const rect = layerPicture.getBoundingClientRect();
      if (!rect.width || !rect.height) return null;
      const px = ((event.clientX - rect.left) * grid.width) / rect.width;
      const py = ((event.clientY - rect.top) * grid.height) / rect.height;
      const column = Math.floor((px - grid.left) / grid.scale);
      const row = Math.floor((py - grid.top) / grid.scale);
      if (column < 0 || row < 0 || column >= grid.columns || row >= grid.rows) return null;
      return { x: grid.x0 + column, z: grid.z0 + row };
    }

    function blockAt(x, y, z) {
      const found = view.blocks.find((b) => b.pos[0] === x && b.pos[1] === y && b.pos[2] === z);
      return found ? found.block : "air";
    }

    layerPicture.addEventListener("mousemove", (event) => {
      const cell = cellAt(event);
      hover.textContent = cell ? `x=${cell.x} y=${layerY} z=${cell.z}: ${blockAt(cell.x, layerY, cell.z)}` : "\u00a0";
    });

    layerPicture.addEventListener("click", (event) => {
      if (!api || api.isOver()) return;
      const cell = cellAt(event);
      const r = view.region;
      if (!cell) {
        say(`Click a cell of the grid: the build region is x ${r.x[0]}..${r.x[1]}, z ${r.z[0]}..${r.z[1]}.`, true);
        return;
      }
      const args = { x: cell.x, y: layerY, z: cell.z, block: AIR };
      if (chosen) {
        args.block = chosen.block;
        args.properties = {};
        for (const select of propertyBox.querySelectorAll("select")) args.properties[select.name] = select.value;
      }
      act("set_block", args);
    });

    layerSelect.addEventListener("change", () => {
      layerY = Number(layerSelect.value);
      draw();
    });

    function draw() {
      const ys = view.layers.map((layer) => layer.y);
      if (!ys.includes(layerY)) layerY = ys.filter((y) => y <= layerY).pop() ?? ys[0];
      layerSelect.replaceChildren(
        ...view.layers.map((layer) => {
          const count = layer.blocks === 1 ? "1 block" : `${layer.blocks} blocks`;
          return new Option(`y=${layer.y} (${count})`, String(layer.y), false, layer.y === layerY);
        }),
      );
      const layer = view.layers.find((l) => l.y === layerY);
      if (layer) layerPicture.src = layer.picture;
      isoPicture.hidden = !view.iso;
      isoEmpty.hidden = Boolean(view.iso);
      if (view.iso) isoPicture.src = view.iso;
      const t = view.trials;
      const press = view.last_press === null ? "not pressed yet" : `last press at tick ${view.last_press}`;
      const button = view.button ? `the button at ${view.button.join(",")}` : "no button placed yet";
      status.textContent = `tick ${view.tick} · trials ${t.used} of ${t.limit} used · ${press} · ${button}`;
      eventsButton.textContent = `Events since tick ${view.last_press ?? 0}`;
    }

    draw();
    return {
      update(next) {
        view = next;
        draw();
      },
      finished() {
        for (const control of controls) control.disabled = true;
        box.classList.add("rs-over");
      },
    };
  }

  window.discogymScreens = window.discogymScreens || {};
  window.discogymScreens.redstone = mount;
})();
