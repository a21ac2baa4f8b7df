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

export function clock(d) {
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

export function time(iso) {
  if (!iso) return dash;
  const d = new Date(iso);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + clock(d);
}

// idTime is the time of a stream id ("1700000000000-3").
export function idTime(id) {
  const ms = Number(String(id || '').split('-')[0]);
  return ms > 0 ? time(new Date(ms).toISOString()) : dash;
}

export function plural(n, one, many) {
  return int(n) + ' ' + (n === 1 ? one : many);
}
