// A small SVG line chart: time on x, values on y, one line per series. Colours come from the
// stylesheet (classes c0..c7), so nothing here needs inline style.

import { h, s } from './dom.js';
import * as fmt from './format.js';

const W = 560;
const H = 220;
const M = { left: 52, right: 14, top: 12, bottom: 26 };

// niceStep picks a round step (1, 2, 5 x 10^n) for about `count` ticks over `span`.
function niceStep(span, count) {
  const raw = span / Math.max(count, 1);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

function yTicks(maxValue, integer) {
  const top = maxValue > 0 ? maxValue : 1;
  const step = integer ? Math.max(1, niceStep(top, 4)) : niceStep(top, 4);
  const ticks = [];
  for (let v = 0; v <= top + step * 0.999; v += step) ticks.push(v);
  return ticks;
}

function compact(v) {
  if (v >= 1e6) return (v / 1e6).toFixed(v >= 1e7 ? 0 : 1) + 'M';
  if (v >= 1e4) return (v / 1e3).toFixed(0) + 'k';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

const TIME_STEPS = [5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3];

function xTicks(x0, x1) {
  const step = TIME_STEPS.find((st) => (x1 - x0) / st <= 6) || TIME_STEPS[TIME_STEPS.length - 1];
  const ticks = [];
  for (let t = Math.ceil(x0 / step) * step; t <= x1; t += step) ticks.push(t);
  return ticks;
}

// lineChart draws series [{name, points: [[tMs, value], ...], color, dashed, band}] over
// [from, to] (ms): color is a class c0..c7 (the same group keeps its colour in every chart),
// a band is drawn wide and light under the other lines, so a line on top of it never hides
// it. A null value breaks a line: no sample there. gaps [[fromMs, toMs], ...] are spans
// without samples, shaded and labelled "no samples" (a line never crosses one). format
// renders a value for the legend; integer keeps the y ticks whole. The x axis shows UTC times of
// day, as every time on the pages is in UTC; the caption says so.
export function lineChart({ title, series, from, to, gaps = [], unit = '', format = fmt.rate, integer = false }) {
  const all = series.flatMap((x) => x.points).filter((p) => p[1] !== null);
  const svg = s('svg', { class: 'chart-svg', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title });
  svg.dataset.points = String(Math.max(0, ...series.map((x) => x.points.length)));
  svg.dataset.first = String(all.length ? Math.min(...all.map((p) => p[0])) : 0); // the oldest point's time (unix ms)
  const x0 = from;
  const x1 = Math.max(to, from + 1);
  const ticks = yTicks(Math.max(0, ...all.map((p) => p[1])), integer);
  const yMax = ticks[ticks.length - 1];
  const px = (t) => M.left + ((t - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (v) => H - M.bottom - (v / yMax) * (H - M.top - M.bottom);

  for (const v of ticks) {
    svg.append(s('line', { class: 'grid', x1: M.left, x2: W - M.right, y1: py(v), y2: py(v) }));
    svg.append(s('text', { class: 'axis', x: M.left - 8, y: py(v) + 4, 'text-anchor': 'end' }, compact(v)));
  }
  for (const t of xTicks(x0, x1)) {
    svg.append(s('text', { class: 'axis', x: px(t), y: H - 6, 'text-anchor': 'middle' }, fmt.tick(t)));
  }
  svg.append(s('line', { class: 'baseline', x1: M.left, x2: W - M.right, y1: py(0), y2: py(0) }));
  svg.dataset.gaps = String(gaps.length);
  for (const [g0, g1] of gaps) {
    const a = px(Math.max(g0, x0));
    const b = px(Math.min(g1, x1));
    if (b - a < 1) continue;
    svg.append(s('rect', { class: 'gap', x: a, y: M.top, width: b - a, height: H - M.top - M.bottom }));
    if (b - a > 60) svg.append(s('text', { class: 'axis gap-label', x: (a + b) / 2, y: M.top + 14, 'text-anchor': 'middle' }, 'no samples'));
  }

  // path draws the points, a null value lifting the pen: the line resumes at the next value.
  const path = (pts) => {
    let pen = 'M';
    return pts.map((p) => {
      if (p[1] === null) {
        pen = 'M';
        return '';
      }
      const d = pen + px(p[0]).toFixed(1) + ' ' + py(p[1]).toFixed(1);
      pen = 'L';
      return d;
    }).filter(Boolean).join(' ');
  };
  const color = (ser, i) => ser.color || 'c' + (i % 8);
  // Bands first, then lines on top; dashed lines let an equal series below show through.
  const order = series.map((ser, i) => [ser, i]).sort((a, b) => Number(Boolean(b[0].band)) - Number(Boolean(a[0].band)));
  for (const [ser, i] of order) {
    const valued = ser.points.filter((p) => p[1] !== null);
    if (!valued.length) continue;
    const c = [color(ser, i), ser.dashed ? 'dashed' : '', ser.band ? 'band' : ''].filter(Boolean).join(' ');
    const line = s('path', { class: 'line ' + c, d: path(ser.points), dataset: { series: ser.name } });
    const last = valued[valued.length - 1];
    line.append(s('title', null, `${ser.name}: ${format(last[1])}${unit}`));
    svg.append(line);
    if (!ser.band) svg.append(s('circle', { class: 'dot ' + color(ser, i), cx: px(last[0]), cy: py(last[1]), r: 3 }));
  }
  if (!all.length) {
    svg.append(s('text', { class: 'axis empty', x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'Collecting samples…'));
  }

  const legend = h('div', { class: 'legend' }, series.map((ser, i) => {
    const valued = ser.points.filter((p) => p[1] !== null);
    const last = valued.length ? valued[valued.length - 1][1] : null;
    return h('span', { class: 'legend-item', dataset: { series: ser.name } }, h('span', { class: ['swatch', ser.color || 'c' + (i % 8), ser.dashed ? 'dashed' : '', ser.band ? 'band' : ''] }), ser.name,
      h('span', { class: 'legend-value', text: last === null ? fmt.dash : format(last) + unit }));
  }));
  return h('figure', { class: 'chart' }, h('figcaption', null, title, h('span', { class: 'muted', text: ' · UTC' })), svg, legend);
}
