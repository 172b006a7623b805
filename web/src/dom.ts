// A few DOM helpers: elements built from code (no innerHTML, so no markup from data).

type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => unknown)>;
type Child = Node | string | null | undefined | false;

/** An element with attributes (``on…`` functions become listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value as EventListener);
    else if (value === true) element.setAttribute(name, "");
    else if (value !== false && value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child);
  return element;
}

/** The element with this id (the page's skeleton has it). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Replace an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}

/** Say something in the page's live region (read by screen readers). */
export function announce(text: string): void {
  byId("announce").textContent = text;
}
