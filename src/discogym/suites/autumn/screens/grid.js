// The grid screen (autumn's WorldTest): the grid on a canvas, arrows and clicks, reset and go-to-test while
// exploring; the masked-frame slider and the six options, the planning goal beside the grid, or the
// found-change button and the frame picker in the test. In frame-rate mode the world moves on by itself: each
// frame the page sends the person's next input, or a noop. With api null it only draws (the episode replay).
"use strict";

(function () {
  const MASK = "mask";
  const ARROWS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
  const MAX_QUEUED = 3; // inputs typed faster than the frame rate wait at most this many frames

  function element(tag, attributes = {}, ...children) {
    const made = document.createElement(tag);
    Object.assign(made, attributes);
    made.append(...children);
    return made;
  }

  function cellSize(size, room) {
    return Math.max(6, Math.min(32, Math.floor(room / size)));
  }

  // Draw a frame; cells outside `only` (a set of "x,y") are shaded when given (the planning goal).
  function drawGrid(canvas, frame, cell, only) {
    const size = frame.length;
    canvas.width = canvas.height = size * cell;
    const paint = canvas.getContext("2d");
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < frame[y].length; x++) {
        const colour = frame[y][x];
        const hidden = only && !only.has(x + "," + y);
        if (colour === MASK || hidden) {
          paint.fillStyle = "#ddd";
          paint.fillRect(x * cell, y * cell, cell, cell);
          paint.strokeStyle = "#999";
          paint.beginPath();
          paint.moveTo(x * cell, (y + 1) * cell);
          paint.lineTo((x + 1) * cell, y * cell);
          paint.stroke();
        } else {
          paint.fillStyle = CSS.supports("color", colour) ? colour : "magenta";
          paint.fillRect(x * cell, y * cell, cell, cell);
        }
      }
    }
    paint.strokeStyle = "rgba(128, 128, 128, 0.35)";
    for (let i = 0; i <= size; i++) {
      paint.beginPath();
      paint.moveTo(i * cell + 0.5, 0);
      paint.lineTo(i * cell + 0.5, size * cell);
      paint.moveTo(0, i * cell + 0.5);
      paint.lineTo(size * cell, i * cell + 0.5);
      paint.stroke();
    }
  }

  function goalFrame(view) {
    const frame = view.frame.map((row) => row.map(() => MASK));
    for (const [x, y, colour] of view.goal) frame[y][x] = colour;
    return frame;
  }

  function describe(view, mode) {
    if (view.phase === "interaction") {
      return `Exploring · frame ${view.frame_number} · ${view.steps_left} actions left` + (mode ? ` · ${mode}` : "");
    }
    if (view.test === "mfp") return `Test: masked frame prediction · frame ${view.frame_number} of ${view.frames - 1}`;
    const name = view.test === "planning" ? "planning" : "change detection";
    return `Test: ${name} · frame ${view.frame_number} · ${view.steps_left} actions left` + (mode ? ` · ${mode}` : "");
  }

  window.discogymScreens = window.discogymScreens || {};
  window.discogymScreens.grid = function mount(root, first, api) {
    const cell = cellSize(first.size, 480);
    const info = element("p", { id: "grid-info", className: "grid-info" });
    const canvas = element("canvas", { id: "grid", className: "grid", title: "click a cell" });
    const goal = element("canvas", { id: "goal", className: "grid goal", title: "the goal: these cells, these colours" });
    const side = element("div", { className: "grid-side" });
    const controls = element("div", { className: "grid-controls" });
    root.append(info, element("div", { className: "grid-row" }, canvas, side), controls);

    let view = first;
    let busy = false; // a call is in flight: the next frame waits for it
    let timer = null;
    const queued = [];
    const live = () => api && !api.isOver();
    const frameRate = api && api.mode === "frame-rate";

    // One call at a time: a frame (or a click) while one is in flight waits for it.
    function send(tool, args) {
      if (!live() || busy) return;
      busy = true;
      api.call(tool, args).catch(() => {}).finally(() => { busy = false; });
    }

    function act(action) {
      send("act", { action });
    }

    // In frame-rate mode inputs wait for the next frame; turn by turn they are sent at once.
    function input(action) {
      if (!live() || !acting()) return;
      if (frameRate) {
        if (queued.length < MAX_QUEUED) queued.push(action);
      } else {
        act(action);
      }
    }

    function acting() {
      return view.phase === "interaction" || view.test === "planning" || (view.test === "cd" && !view.signalled);
    }

    function tick() {
      if (!live() || busy || !acting()) return;
      act(queued.shift() || "noop");
    }

    function button(id, label, onClick) {
      const made = element("button", { id, type: "button", textContent: label });
      made.addEventListener("click", onClick);
      return made;
    }

    canvas.addEventListener("click", (event) => {
      const box = canvas.getBoundingClientRect();
      const x = Math.floor(((event.clientX - box.left) / box.width) * view.size);
      const y = Math.floor(((event.clientY - box.top) / box.height) * view.size);
      if (x >= 0 && y >= 0 && x < view.size && y < view.size) input(`click ${x} ${y}`);
    });
    document.addEventListener("keydown", (event) => {
      if (!(event.key in ARROWS) || event.target.closest("input, textarea, select")) return;
      event.preventDefault();
      input(ARROWS[event.key]);
    });

    function drawControls() {
      controls.replaceChildren();
      side.replaceChildren();
      if (view.test === "planning") {
        side.append(element("p", { textContent: "The goal" }), goal);
        drawGrid(goal, goalFrame(view), cell, new Set(view.goal.map(([x, y]) => x + "," + y)));
      }
      if (!api) return;
      if (acting()) {
        for (const action of Object.values(ARROWS)) controls.append(button("act-" + action, action, () => input(action)));
        if (!frameRate) controls.append(button("act-noop", "noop (let a frame pass)", () => input("noop")));
      }
      if (view.phase === "interaction") {
        controls.append(button("reset", "reset", () => input("reset")), button("go-to-test", "go to test", () => send("go_to_test", {})));
      } else if (view.test === "mfp") {
        drawMfp();
      } else if (view.test === "cd") {
        if (!view.signalled) controls.append(button("found-change", "found change", () => send("found_change", {})));
        else drawPicker();
      }
    }

    function drawMfp() {
      const slider = element("input", { id: "mfp-slider", type: "range", min: 0, max: view.frames - 1, value: view.frame_number });
      slider.addEventListener("change", () => send("show_frame", { index: Number(slider.value) }));
      const choices = element("div", { className: "options" });
      view.options.forEach((option, index) => {
        const picture = element("canvas", { className: "grid option" });
        drawGrid(picture, option, Math.max(8, Math.floor(96 / Math.max(option.length, option[0].length))));
        const label = element("label", { className: "option" }, element("input", { type: "radio", name: "option", value: index, id: "option-" + index }), ` option ${index}`, picture);
        choices.append(label);
      });
      const submit = button("answer", "submit", () => {
        const chosen = choices.querySelector("input:checked");
        if (chosen) send("answer", { index: Number(chosen.value) });
      });
      controls.append(element("label", {}, "frame ", slider), element("p", { textContent: "Which option fills the masked rectangle of the last frame?" }), choices, submit);
    }

    function drawPicker() {
      const preview = element("canvas", { id: "picker-frame", className: "grid" });
      const slider = element("input", { id: "frame-picker", type: "range", min: 0, max: view.frames.length - 1, value: 0 });
      const shown = element("span", { id: "picked" });
      const draw = () => {
        shown.textContent = ` frame ${slider.value}`;
        drawGrid(preview, view.frames[Number(slider.value)], cellSize(view.size, 240));
      };
      slider.addEventListener("input", draw);
      draw();
      side.append(element("p", { textContent: "Where did the change first show?" }), preview);
      controls.append(element("label", {}, "frame ", slider, shown), button("choose-frame", "submit", () => send("choose_frame", { index: Number(slider.value) })));
    }

    function update(next) {
      const redraw = next.phase !== view.phase || next.test !== view.test || next.signalled !== view.signalled;
      view = next;
      info.textContent = describe(view, api && api.mode);
      drawGrid(canvas, view.frame, cell);
      if (redraw || !controls.childElementCount) drawControls();
      root.dataset.phase = view.phase + (view.test ? ":" + view.test : "");
      root.dataset.frame = String(view.frame_number);
    }

    update(first);
    drawControls();
    if (frameRate && live()) timer = setInterval(tick, 1000 / first.frame_rate);
    return {
      update,
      finished() {
        if (timer) clearInterval(timer);
        for (const control of root.querySelectorAll("button, input")) control.disabled = true;
      },
    };
  };
})();
