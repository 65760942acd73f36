// The Walk screen: view, location map, pose readout, feedback; keys and buttons move;
// clicking the city map jumps to the nearest pose.
import { api, withToken } from "/static/api.js";
import { $, buildControls, setBranches, showError } from "/static/dom.js";

export const walk = { pose: null, busy: false, magnitude: null, info: null };

function render(state) {
  walk.pose = state.pose;
  $("walk-view").src = state.view;
  if (state.map) $("walk-map").src = state.map;
  $("walk-feedback").textContent = state.feedback;
  const p = state.pose;
  $("pose-latlon").textContent = `${p.lat.toFixed(6)}, ${p.lon.toFixed(6)}`;
  $("pose-segment").textContent = p.segment + (p.at_junction ? " (at junction)" : "");
  $("pose-offset").textContent = `${p.offset_m.toFixed(1)} m`;
  $("pose-heading").textContent = `${p.heading_deg.toFixed(0)}°`;
  $("pose-yawpitch").textContent = `${p.yaw_deg.toFixed(0)}° / ${p.pitch_deg.toFixed(0)}°`;
  $("pose-bearing").textContent = `${p.view_bearing_deg.toFixed(0)}°`;
  $("pose-cell").textContent = p.cell;
  setBranches("walk", state.branches);
  placeDot(p.map_px);
  document.body.dataset.walkStep = String(state.step);
}

function placeDot(px) {
  const img = $("basemap");
  const dot = $("basemap-dot");
  if (!walk.info || !img.clientWidth) return;
  const scale = img.clientWidth / walk.info.basemap.width;
  dot.style.left = `${px[0] * scale}px`;
  dot.style.top = `${px[1] * scale}px`;
  dot.hidden = false;
}

async function call(method, path, body) {
  if (walk.busy) return;
  walk.busy = true;
  document.body.classList.add("busy");
  try {
    render(await api(method, path, body));
    showError(null);
  } catch (error) {
    showError(error);
  } finally {
    walk.busy = false;
    document.body.classList.remove("busy");
  }
}

export function act(action, magnitude) {
  return call("POST", "/api/walk/step", { action, magnitude: magnitude ?? (walk.magnitude.value || null) });
}

export function goto(target) {
  return call("POST", "/api/walk/goto", target);
}

export function refresh() {
  return call("GET", "/api/walk");
}

export function initWalk(info) {
  walk.info = info;
  walk.magnitude = buildControls($("walk-controls"), (a, m) => act(a, m), "walk");
  const img = $("basemap");
  img.src = withToken("/api/basemap.png");
  img.addEventListener("load", () => walk.pose && placeDot(walk.pose.map_px));
  img.addEventListener("click", (event) => {
    const rect = img.getBoundingClientRect();
    const scale = info.basemap.width / rect.width;
    goto({ col: (event.clientX - rect.left) * scale, row: (event.clientY - rect.top) * scale });
  });
}
