// The JSON API client: relative URLs (the dashboard may be mounted under any path), the
// bearer token when the dashboard asks for one, the CSRF token on writes.

const TOKEN_KEY = 'streamq.dashboard.token';
const state = { csrf: '', token: sessionStorage.getItem(TOKEN_KEY) || '' };

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function setCSRF(token) {
  state.csrf = token || '';
}

export function setToken(token) {
  state.token = token || '';
  if (state.token) sessionStorage.setItem(TOKEN_KEY, state.token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function hasToken() {
  return state.token !== '';
}

async function request(method, path, body, signal) {
  const headers = { Accept: 'application/json' };
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  const init = { method, headers, signal, cache: 'no-store', credentials: 'same-origin' };
  if (method === 'POST') {
    headers['Content-Type'] = 'application/json';
    headers['X-CSRF-Token'] = state.csrf;
    init.body = JSON.stringify(body || {});
  }
  const res = await fetch('api/' + path, init);
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    throw new APIError(res.status, (data && data.error) || res.status + ' ' + res.statusText);
  }
  return data;
}

export function get(path, signal) {
  return request('GET', path, undefined, signal);
}

export function post(path, body) {
  return request('POST', path, body);
}

// path joins URI-encoded segments: path('topics', name, 'dlq').
export function path(...segments) {
  return segments.map((x) => encodeURIComponent(String(x))).join('/');
}
