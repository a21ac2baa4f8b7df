// DOM helpers. Every value from the API reaches the page as text (textContent, text
// nodes, attribute values): nothing here parses HTML, and no markup is ever built from a
// string (the Go tests check the sources for every HTML-parsing sink).

const SVG_NS = 'http://www.w3.org/2000/svg';

// Attributes that could run code or load content are refused outright.
function safeName(name) {
  const n = name.toLowerCase();
  if (n.startsWith('on') || n === 'style' || n === 'srcdoc' || n === 'src' || n === 'action' || n === 'formaction') {
    throw new Error('refused attribute ' + name);
  }
  return name;
}

function hrefOK(v) {
  return typeof v === 'string' && v.startsWith('#/');
}

function apply(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    switch (k) {
      case 'class': el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v); break;
      case 'text': el.textContent = String(v); break;
      case 'dataset': for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv); break;
      case 'on': for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn); break;
      case 'href':
        if (!hrefOK(v)) throw new Error('refused href');
        el.setAttribute('href', v);
        break;
      case 'checked': case 'disabled': case 'value': case 'hidden': el[k] = v; break;
      default: el.setAttribute(safeName(k), v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// h builds an HTML element: h('td', {class: 'num'}, 'text', child, [more]).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  apply(el, props);
  append(el, children);
  return el;
}

// s builds an SVG element.
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, props);
  append(el, children);
  return el;
}

// fill replaces el's children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// link to a route of the page (#/...), the segments URI-encoded.
export function route(...segments) {
  return '#/' + segments.map((x) => encodeURIComponent(String(x))).join('/');
}
