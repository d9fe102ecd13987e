// The hidden-number suite's screen in the web app (examples/hidden_number.py, Suite.web_screens): the answers so
// far, and a number to ask about or submit. With api null it only draws (the episode replay).
"use strict";

(function () {
  function answerItem(answer) {
    const item = document.createElement("li");
    item.textContent = `higher than ${answer.n}? ${answer.higher ? "yes" : "no"}`;
    return item;
  }

  window.discogymScreens["hidden-number"] = (root, view, api) => {
    const list = document.createElement("ol");
    list.className = "hidden-number-answers";
    const draw = (shown) => list.replaceChildren(...shown.answers.map(answerItem));
    root.append(list);
    draw(view);
    if (!api) return { update: draw, finished() {} };
    const number = Object.assign(document.createElement("input"), { type: "number", min: 1, max: 100, value: 50 });
    number.id = "hidden-number-n";
    const ask = Object.assign(document.createElement("button"), { id: "hidden-number-ask", textContent: "Higher?" });
    const submit = Object.assign(document.createElement("button"), { id: "hidden-number-submit", textContent: "Submit" });
    ask.onclick = () => api.call("higher_than", { n: Number(number.value) });
    submit.onclick = () => api.call("submit", { n: Number(number.value) });
    root.append(number, ask, submit);
    return {
      update: draw,
      finished() {
        for (const control of [number, ask, submit]) control.disabled = true;
      },
    };
  };
})();
