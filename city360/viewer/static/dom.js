// Small DOM helpers. User text only ever goes through textContent, never innerHTML.

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

export function showError(error) {
  const box = $("error");
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.textContent = error.message || String(error);
  box.hidden = false;
}

// Buttons for W/A/S/D/Q/E, the branches and a magnitude selector; `act(action, magnitude)`.
export function buildControls(container, act, prefix) {
  const magnitude = el("select", { id: `${prefix}-magnitude`, title: "magnitude" },
    el("option", { value: "", text: "default" }),
    el("option", { value: "SMALL", text: "SMALL" }),
    el("option", { value: "MEDIUM", text: "MEDIUM" }),
    el("option", { value: "LARGE", text: "LARGE" }));
  const keys = [
    ["Q", "Q look up"], ["W", "W forward"], ["E", "E look down"],
    ["A", "A turn left"], ["S", "S face travel"], ["D", "D turn right"],
  ];
  const moves = el("div", { class: "keys" });
  for (const [action, label] of keys) {
    moves.append(el("button", {
      type: "button", id: `${prefix}-${action}`, "data-action": action, text: label,
      onclick: () => act(action, magnitude.value || null),
    }));
  }
  const branches = el("div", { class: "branches" });
  for (const [action, label] of [["LEFT", "← LEFT"], ["UP", "↑ UP"], ["RIGHT", "→ RIGHT"]]) {
    branches.append(el("button", {
      type: "button", id: `${prefix}-${action}`, "data-action": action, text: label,
      disabled: "", onclick: () => act(action, null),
    }));
  }
  container.replaceChildren(moves, branches, el("label", { text: "magnitude " }, magnitude));
  return magnitude;
}

export function setBranches(prefix, branches) {
  for (const action of ["LEFT", "UP", "RIGHT"]) {
    $(`${prefix}-${action}`).disabled = !branches[action];
  }
}
