// The Play screen: a task played with exactly an agent's observation (view, map if the run
// uses it, offered branches, feedback, step count) and action set, ending with ANSWER.
import { api, withToken } from "/static/api.js";
import { $, buildControls, el, setBranches, showError } from "/static/dom.js";

const play = { busy: false, magnitude: null, active: false };

export function playing() {
  return play.active;
}

function renderObs(state) {
  $("play-view").src = state.view;
  const map = $("play-map");
  map.hidden = !state.map;
  if (state.map) map.src = state.map;
  $("play-feedback").textContent = state.feedback;
  $("play-step").textContent = String(state.step);
  $("play-limit").textContent = String(state.step_limit);
  setBranches("play", state.branches);
  document.body.dataset.playStep = String(state.step);
  play.active = !state.done;
  const outcome = $("play-outcome");
  if (state.done) {
    const o = state.outcome;
    const verdict = o.correct ? "correct" : "not correct";
    outcome.replaceChildren(
      el("h3", { text: `Score ${o.score.toFixed(2)} (${verdict})` }),
      el("p", { text: `Ended: ${o.status} after ${o.steps} steps. Your answer: ${o.answer || "–"}` }),
      el("button", { type: "button", text: "Back to the task list", onclick: () => showList() }),
    );
    outcome.hidden = false;
    for (const button of document.querySelectorAll("#play-controls button, #answer-form button")) {
      button.disabled = true;
    }
  } else {
    outcome.hidden = true;
  }
}

function renderTask(state) {
  $("play-prompt").textContent = state.prompt;
  const images = $("play-images");
  images.replaceChildren(...state.images.map((src) =>
    el("img", { src: withToken(src), alt: "reference image", class: "reference" })));
  $("play-pick").hidden = true;
  $("play-episode").hidden = false;
  for (const button of document.querySelectorAll("#play-controls button, #answer-form button")) {
    button.disabled = false;
  }
  $("play-answer").value = "";
  renderObs(state);
}

async function call(path, body, after) {
  if (play.busy) return;
  play.busy = true;
  try {
    after(await api("POST", path, body));
    showError(null);
  } catch (error) {
    showError(error);
  } finally {
    play.busy = false;
  }
}

export function act(action, magnitude) {
  if (!play.active) return;
  call("/api/play/step", { action, magnitude: magnitude ?? (play.magnitude.value || null) }, renderObs);
}

export async function showList() {
  play.active = false;
  $("play-pick").hidden = false;
  $("play-episode").hidden = true;
  try {
    const data = await api("GET", "/api/play/tasks");
    $("run-name").textContent = `results go to run ${data.run}`;
    const body = $("play-table").tBodies[0];
    body.replaceChildren(...data.tasks.map((t) => el("tr", { "data-task": t.id },
      el("td", { text: t.id }), el("td", { text: t.family }), el("td", { text: t.difficulty }),
      el("td", { text: t.played ? `${t.status}, score ${t.score.toFixed(2)}` : "" }),
      el("td", {}, t.played ? "" : el("button", {
        type: "button", text: "Play", "data-play": t.id,
        onclick: () => call("/api/play/start", { task_id: t.id }, renderTask),
      })))));
  } catch (error) {
    showError(error);
  }
}

export async function resume() {
  try {
    const current = await api("GET", "/api/play");
    if (current.task_id === null) await showList();  // this tab plays no task
    else renderTask(current);
  } catch (error) {
    showError(error);
  }
}

export function initPlay(info) {
  play.magnitude = buildControls($("play-controls"), (a, m) => act(a, m), "play");
  if (!info.play_map) $("play-map").hidden = true;
  $("answer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!play.active) return;
    call("/api/play/step", { action: "ANSWER", answer: $("play-answer").value }, renderObs);
  });
  $("give-up").addEventListener("click", () => call("/api/play/abandon", {}, renderObs));
}
