// Talking to the viewer's API: the session id and the access token go with every request,
// errors come back as JSON {error, problems?} and are raised as ApiError.

const params = new URLSearchParams(window.location.search);
export const token = params.get("token");

function sessionId() {
  let id = window.sessionStorage.getItem("city360-session");
  if (!id) {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    window.sessionStorage.setItem("city360-session", id);
  }
  return id;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `request failed (${status})`);
    this.status = status;
    this.problems = (body && body.problems) || [];
    this.body = body || {};
  }
}

export async function api(method, path, body) {
  const headers = { "X-City360-Session": sessionId() };
  if (token) headers["X-City360-Token"] = token;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// A URL for <img src> (images cannot send headers, so the token goes in the query).
export function withToken(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}
