// Building DOM nodes without innerHTML: every value from the API becomes a text node.

/** h("td", { class: "num" }, "3") — attributes (on* = listeners), then children (strings, nodes, arrays, null). */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `target`. */
export function show(target, ...children) {
  target.replaceChildren();
  append(target, children);
}

/** A table: columns [{ title, num?, cell(row) }], or an "empty" line when there are no rows. */
export function table(columns, rows, emptyText) {
  if (rows.length === 0) return h("p", { class: "empty" }, emptyText);
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.num ? "num" : undefined }, c.title)))),
      h("tbody", {}, rows.map((row) => h("tr", { dataset: row.__key ? { key: row.__key } : undefined }, columns.map((c) => h("td", { class: c.num ? "num" : undefined }, c.cell(row)))))),
    ),
  );
}

/** A status pill. */
export function badge(text, kind = text) {
  return h("span", { class: `badge ${kind}` }, text);
}

/** Form fields by name (trimmed strings). */
export function formValues(form) {
  return Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]));
}
