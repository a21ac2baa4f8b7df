// Number, time and size formatting.

const nf = new Intl.NumberFormat('en-US');

export const dash = '—';

export function int(n) {
  return n === null || n === undefined ? dash : nf.format(n);
}

export function rate(r) {
  if (r === null || r === undefined) return dash;
  if (r === 0) return '0';
  if (r < 10) return r.toFixed(1);
  return nf.format(Math.round(r));
}

export function duration(ms) {
  if (!ms || ms <= 0) return dash;
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm ' + Math.floor(s % 60) + 's';
  const hours = Math.floor(m / 60);
  if (hours < 48) return hours + 'h ' + (m % 60) + 'm';
  return Math.floor(hours / 24) + 'd ' + (hours % 24) + 'h';
}

export function bytes(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1024 / 1024).toFixed(1) + ' MiB';
}

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

// msOf is a time given as an RFC 3339 string, unix ms or a Date, in unix ms (NaN when none).
function msOf(t) {
  if (!t) return NaN;
  if (t instanceof Date) return t.getTime();
  if (typeof t === 'number') return t;
  return Date.parse(t);
}

// utc is the one way a page writes a time, the CLI's and the server's texts' (timetext.go):
// UTC to the second with the zone, "2026-12-05 02:10:11 UTC", so a table row and a problem
// text about the same instant read the same; a dash when t is no time.
function utc(t) {
  const ms = msOf(t);
  if (Number.isNaN(ms)) return dash;
  const d = new Date(ms);
  return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()) + ' ' +
    pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds()) + ' UTC';
}

// time is t (RFC 3339, unix ms or a Date) as utc writes it: "2026-12-05 02:10:11 UTC".
export function time(t) {
  return utc(t);
}

// clock is time's time of day with its zone, "02:10:11 UTC", where a date is not needed.
export function clock(t) {
  const text = utc(t);
  return text === dash ? dash : text.slice(11);
}

// tick is clock without the zone, "02:10:11": a chart's axis, whose caption says UTC.
export function tick(t) {
  const text = utc(t);
  return text === dash ? dash : text.slice(11, 19);
}

// date is time's date, "2026-12-05".
export function date(t) {
  const text = utc(t);
  return text === dash ? dash : text.slice(0, 10);
}

// idTime is the time of a stream id ("1700000000000-3").
export function idTime(id) {
  const ms = Number(String(id || '').split('-')[0]);
  return ms > 0 ? utc(ms) : dash;
}

export function plural(n, one, many) {
  return int(n) + ' ' + (n === 1 ? one : many);
}
