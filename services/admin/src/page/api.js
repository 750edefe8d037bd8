// The admin API from the page: same-origin fetches with the session cookie,
// and the session's CSRF token on every write (GET /api/session hands it out).

let csrfToken = "";

export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export async function startSession() {
  const session = await request("GET", "/api/session");
  csrfToken = session.csrfToken ?? "";
  return session;
}

export async function request(method, path, body) {
  const headers = { accept: "application/json" };
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401) {
    location.assign("/login");
    throw new ApiError(401, "unauthorized", "signed out");
  }
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, json.error?.kind ?? "internal", json.error?.message ?? `HTTP ${response.status}`);
  return json;
}

export const api = {
  get: (path, query = {}) => {
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ""));
    const qs = params.toString();
    return request("GET", qs ? `${path}?${qs}` : path);
  },
  post: (path, body = {}) => request("POST", path, body),
  put: (path, body = {}) => request("PUT", path, body),
  delete: (path) => request("DELETE", path),
  logout: () => request("POST", "/logout"),
};
