// Entry point: screens (Walk, Author, Play), the keyboard, and start-up.
import { api } from "/static/api.js";
import { initAuthor, refreshTasks } from "/static/author.js";
import { $, showError } from "/static/dom.js";
import { act as playAct, initPlay, playing, resume } from "/static/play.js";
import { act as walkAct, initWalk, refresh } from "/static/walk.js";

let screen = "walk";

const KEYS = {
  w: "W", a: "A", s: "S", d: "D", q: "Q", e: "E",
  ArrowLeft: "LEFT", ArrowUp: "UP", ArrowRight: "RIGHT",
};

async function show(name) {
  screen = name;
  for (const tab of document.querySelectorAll(".tab")) {
    tab.setAttribute("aria-pressed", String(tab.dataset.screen === name));
  }
  $("walk-panel").hidden = name === "play";
  $("author-panel").hidden = name !== "author";
  $("play-panel").hidden = name !== "play";
  document.body.dataset.screen = name;
  showError(null);
  if (name === "play") await resume();
  else {
    await refresh();
    if (name === "author") await refreshTasks();
  }
}

function onKey(event) {
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select")) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const action = KEYS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
  if (!action) return;
  event.preventDefault();
  const branch = ["LEFT", "UP", "RIGHT"].includes(action);
  if (screen === "play") {
    // like the buttons: a branch that is not offered is not sent (it would cost a step)
    if (playing() && (!branch || !$(`play-${action}`).disabled)) playAct(action, null);
  } else if (!branch || !$(`walk-${action}`).disabled) {
    walkAct(action, null);
  }
}

async function start() {
  try {
    const info = await api("GET", "/api/info");
    $("city-name").textContent = info.city;
    // the credit OSM's licence asks for, only where the maps show OSM data
    $("attribution").textContent = info.attribution ? `Map data ${info.attribution}` : "";
    initWalk(info);
    initAuthor(info);
    initPlay(info);
    for (const tab of document.querySelectorAll(".tab")) {
      tab.addEventListener("click", () => show(tab.dataset.screen));
    }
    document.addEventListener("keydown", onKey);
    await show("walk");
    document.body.dataset.ready = "true";
  } catch (error) {
    showError(error);
  }
}

start();
