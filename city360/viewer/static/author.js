// The Author screen: a form per family filled from poses picked while walking; verify (oracle,
// answer format) and preview the agent's prompt before saving; list, edit and delete tasks.
import { api, withToken } from "/static/api.js";
import { $, el, showError } from "/static/dom.js";
import { goto, walk } from "/static/walk.js";

const FIELDS = {
  Localization: ["answer"],
  LandmarkSearchText: ["goal", "threshold", "landmark"],
  LandmarkSearchImage: ["goal", "threshold", "landmark", "capture"],
  MapNavigation: ["goal", "threshold"],
  VLN: ["goal", "threshold", "instructions"],
  ObjectCount: ["range_start", "goal", "object_kind", "stretch", "answer"],
  RelationalSpatial: ["question", "anchor", "relation", "answer"],
};
const ANSWER_LABELS = {
  Localization: "Grid cell (filled in from the start pose)",
  ObjectCount: "Count",
  RelationalSpatial: "Answer (the place's name as its sign shows it)",
};

const form = { start: null, goal: null, rangeStart: null, capture: null, referenceImage: null, replacing: null,
  families: [], tasks: [] };

function family() {
  return $("f-family").value;
}

function spec() {
  return form.families.find((f) => f.family === family());
}

function describe(pose) {
  if (!pose) return "not set";
  return `${pose.segment} @ ${Number(pose.offset_m).toFixed(1)} m`;
}

function showFields() {
  const wanted = new Set(FIELDS[family()]);
  for (const node of document.querySelectorAll("#author-form [data-for]")) {
    node.hidden = !wanted.has(node.dataset.for);
  }
  $("answer-label").textContent = ANSWER_LABELS[family()] || "Answer";
  const s = spec();
  if (s && s.threshold_m && !$("f-threshold").value) $("f-threshold").value = s.threshold_m;
  $("use-goal").textContent = family() === "ObjectCount"
    ? "Use this pose as the end of the stretch" : "Use this pose as goal";
}

function suggestId() {
  const short = spec().short;
  const ids = new Set(form.tasks.map((t) => t.id));
  let n = 1;
  while (ids.has(`${short}-v${String(n).padStart(3, "0")}`)) n += 1;
  return `${short}-v${String(n).padStart(3, "0")}`;
}

function draft() {
  const number = (id) => ($(id).value === "" ? null : Number($(id).value));
  const text = (id) => ($(id).value.trim() === "" ? null : $(id).value);
  const wanted = new Set(FIELDS[family()]);
  const d = {
    id: $("f-id").value.trim(),
    family: family(),
    difficulty: $("f-difficulty").value,
    start: form.start,
    step_limit: number("f-step-limit") ?? 50,
  };
  if (wanted.has("goal")) d.goal = form.goal;
  if (wanted.has("range_start")) {
    if (form.rangeStart) d.range_start = form.rangeStart;
    d.count_side = $("f-count-side").value || null;
  }
  if (wanted.has("threshold")) d.threshold_m = number("f-threshold");
  if (wanted.has("landmark")) d.landmark = text("f-landmark");
  if (wanted.has("capture")) {
    if (form.capture) d.reference_capture = form.capture;
    else if (form.referenceImage) d.reference_image = form.referenceImage;
  }
  if (wanted.has("instructions")) {
    d.instructions = $("f-instructions").value.split("\n").map((s) => s.trim()).filter(Boolean);
  }
  if (wanted.has("object_kind")) d.object_kind = text("f-object-kind");
  if (wanted.has("stretch")) d.stretch = text("f-stretch");
  if (wanted.has("question")) d.question = text("f-question");
  if (wanted.has("anchor")) d.anchor = text("f-anchor");
  if (wanted.has("relation")) d.relation = $("f-relation").value || null;
  if (wanted.has("answer")) d.answer = text("f-answer");
  return { draft: d, replacing: form.replacing };
}

function showProblems(problems) {
  $("problems").replaceChildren(...problems.map((p) =>
    el("li", { text: `${p.field}: ${p.message}`, "data-field": p.field })));
}

function showVerdict(result) {
  showProblems(result.problems || []);
  $("prompt-preview").textContent = result.prompt || "";
  $("prompt-images").replaceChildren(...(result.images || []).map((src) => el("img", {
    src: src.startsWith("data:") ? src : withToken(src), alt: "image the agent gets", class: "reference",
  })));
  const status = result.ok
    ? `verified${result.oracle_steps ? `: the oracle reaches the goal in ${result.oracle_steps} steps` : ""}`
    : "";
  document.getElementById("author-form").dataset.status = result.saved ? "saved" : (result.ok ? "ok" : "problems");
  if (status) $("problems").prepend(el("li", { class: "ok", text: result.saved ? `saved ${result.saved} (${status})` : status }));
}

async function verify() {
  if (!form.start) {
    showProblems([{ field: "start", message: "pick a start: walk there and press 'use this pose as start'" }]);
    return;
  }
  try {
    showVerdict(await api("POST", "/api/author/verify", draft()));
    showError(null);
  } catch (error) {
    showProblems(error.problems);
    showError(error);
  }
}

async function save(event, asNew = false) {
  event.preventDefault();
  if (!form.start) {
    showProblems([{ field: "start", message: "pick a start: walk there and press 'use this pose as start'" }]);
    return;
  }
  try {
    const request = draft();
    if (asNew) request.replacing = null;
    const result = await api("POST", "/api/suite/tasks", request);
    showVerdict(result);
    showError(null);
    form.replacing = result.saved;
    await refreshTasks();
  } catch (error) {
    showProblems(error.problems);
    if (error.body && error.body.prompt) $("prompt-preview").textContent = error.body.prompt;
    document.getElementById("author-form").dataset.status = "problems";
    showError(error);
  }
}

function reset() {
  delete $("author-form").dataset.status;
  delete $("author-form").dataset.loaded;
  form.start = form.goal = form.rangeStart = form.capture = form.referenceImage = null;
  form.replacing = null;
  for (const id of ["f-threshold", "f-landmark", "f-instructions", "f-object-kind", "f-stretch",
    "f-question", "f-anchor", "f-answer"]) $(id).value = "";
  $("f-relation").value = "";
  $("f-count-side").value = "both";
  $("f-range-start").textContent = "the start";
  $("f-start").textContent = describe(null);
  $("f-goal").textContent = describe(null);
  $("capture-preview").hidden = true;
  $("problems").replaceChildren();
  $("prompt-preview").textContent = "";
  $("prompt-images").replaceChildren();
  showFields();
  $("f-id").value = suggestId();
}

async function edit(taskId) {
  try {
    const data = await api("GET", `/api/suite/tasks/${encodeURIComponent(taskId)}`);
    const d = data.draft;
    $("f-family").value = d.family;
    reset();
    form.replacing = d.id;
    $("f-id").value = d.id;
    $("f-difficulty").value = d.difficulty;
    $("f-step-limit").value = d.step_limit;
    form.start = d.start;
    form.goal = d.goal || null;
    form.rangeStart = d.range_start || null;
    $("f-range-start").textContent = form.rangeStart ? describe(form.rangeStart) : "the start";
    $("f-count-side").value = d.count_side || "both";
    $("f-start").textContent = describe(form.start);
    $("f-goal").textContent = describe(form.goal);
    if (d.threshold_m) $("f-threshold").value = d.threshold_m;
    $("f-landmark").value = d.landmark || "";
    $("f-instructions").value = (d.instructions || []).join("\n");
    $("f-object-kind").value = d.object_kind || "";
    $("f-stretch").value = d.stretch || "";
    $("f-question").value = d.question || "";
    $("f-anchor").value = d.anchor || "";
    $("f-relation").value = d.relation || "";
    $("f-answer").value = d.answer || "";
    if (d.reference_image) {
      form.referenceImage = d.reference_image;
      const preview = $("capture-preview");
      preview.src = withToken(`/api/suite/asset?path=${encodeURIComponent(d.reference_image)}`);
      preview.hidden = false;
    }
    $("prompt-preview").textContent = data.prompt;
    await goto(d.start);
    $("author-form").dataset.loaded = d.id;
  } catch (error) {
    showError(error);
  }
}

async function remove(taskId) {
  if (!window.confirm(`Delete task ${taskId} from the suite?`)) return;
  try {
    await api("DELETE", `/api/suite/tasks/${encodeURIComponent(taskId)}`);
    if (form.replacing === taskId) form.replacing = null;
    await refreshTasks();
  } catch (error) {
    showError(error);
  }
}

export async function refreshTasks() {
  try {
    const suite = await api("GET", "/api/suite");
    form.tasks = suite.tasks;
    $("suite-name").textContent = `suite ${suite.name}${suite.exists ? "" : " (new: created on the first save)"}`;
    $("task-table").tBodies[0].replaceChildren(...suite.tasks.map((t) => el("tr", { "data-task": t.id },
      el("td", { text: t.id }), el("td", { text: t.family }), el("td", { text: t.difficulty }),
      el("td", {},
        el("button", { type: "button", text: "Edit", onclick: () => edit(t.id) }),
        el("button", { type: "button", text: "Delete", onclick: () => remove(t.id) })))));
    if (!$("f-id").value) $("f-id").value = suggestId();
  } catch (error) {
    showError(error);
  }
}

export function initAuthor(info) {
  form.families = info.families;
  const select = $("f-family");
  select.replaceChildren(...info.families.map((f) => el("option", { value: f.family, text: f.family })));
  select.addEventListener("change", () => {
    $("f-threshold").value = "";
    showFields();
    if (!form.replacing) $("f-id").value = suggestId();
  });
  $("use-start").addEventListener("click", () => {
    if (!walk.pose) return;
    const p = walk.pose;
    form.start = { segment: p.segment, offset_m: p.offset_m, yaw_deg: p.yaw_deg };
    $("f-start").textContent = `${describe(form.start)} (${p.lat.toFixed(6)}, ${p.lon.toFixed(6)}), cell ${p.cell}`;
    if (family() === "Localization") $("f-answer").value = p.cell;
  });
  $("use-range-start").addEventListener("click", () => {
    // click the map to jump where the range begins, then mark it here
    if (!walk.pose) return;
    const p = walk.pose;
    form.rangeStart = { segment: p.segment, offset_m: p.offset_m };
    $("f-range-start").textContent = `${describe(form.rangeStart)} (${p.lat.toFixed(6)}, ${p.lon.toFixed(6)})`;
  });
  $("use-goal").addEventListener("click", () => {
    if (!walk.pose) return;
    const p = walk.pose;
    form.goal = { segment: p.segment, offset_m: p.offset_m };
    $("f-goal").textContent = `${describe(form.goal)} (${p.lat.toFixed(6)}, ${p.lon.toFixed(6)})`;
  });
  $("capture").addEventListener("click", async () => {
    try {
      const shot = await api("POST", "/api/author/capture");
      form.capture = shot.capture;
      form.referenceImage = null;
      const preview = $("capture-preview");
      preview.src = shot.image;
      preview.hidden = false;
    } catch (error) {
      showError(error);
    }
  });
  $("verify").addEventListener("click", verify);
  $("author-form").addEventListener("submit", (event) => save(event));
  $("save-new").addEventListener("click", (event) => save(event, true));
  $("new-task").addEventListener("click", reset);
  showFields();
}
