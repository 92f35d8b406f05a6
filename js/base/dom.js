// Small DOM helpers shared by the panel and its hover read-out.

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function checkbox(className, text) {
  const label = element("label");
  const input = element("input", className);
  input.type = "checkbox";
  label.append(input, document.createTextNode(text));
  return [label, input];
}

/** Sets `node`'s text and hides it while the text is empty. */
export function showText(node, text) {
  node.textContent = text;
  node.hidden = !text;
}
