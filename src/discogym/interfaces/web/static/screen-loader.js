// A suite's screen: /screens/KIND.js, the script the suite names for KIND (Suite.web_screens), registers
// discogymScreens[KIND] = (root, view, api) => screen, a screen
// being { update(view), finished() }; api is null where the screen only draws (the episode replay).
"use strict";

window.discogymScreens = window.discogymScreens || {};

// The mount function of the screen of `kind`, its script loaded once; null when there is none.
function loadScreen(kind) {
  return new Promise((resolve) => {
    if (window.discogymScreens[kind]) return resolve(window.discogymScreens[kind]);
    const script = document.createElement("script");
    script.src = `/screens/${encodeURIComponent(kind)}.js`;
    script.onload = () => resolve(window.discogymScreens[kind] || null);
    script.onerror = () => resolve(null);
    document.body.append(script);
  });
}
