// A few DOM helpers: elements built from code (no innerHTML, so no markup from data).

import { spokenText } from "./cards";

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

/** Say something in the page's live region (read by screen readers; cards by their names). */
export function announce(text: string): void {
  byId("announce").textContent = spokenText(text);
}

/**
 * Make ``parent``'s children ``nodes``, keeping every old child (by id) that would be
 * replaced by an identical one: a change elsewhere leaves the hand's buttons, their focus
 * and a tap in progress alone.
 */
export function patch(parent: Element, ...nodes: Child[]): void {
  const old = new Map<string, Element>();
  for (const child of parent.children) if (child.id) old.set(child.id, child);
  const wanted = nodes
    .filter((n): n is Node | string => n !== null && n !== undefined && n !== false)
    .map((node) => {
      if (!(node instanceof Element) || !node.id) return node;
      const kept = old.get(node.id);
      return kept && (kept === node || kept.outerHTML === node.outerHTML) ? kept : node;
    });
  const keep = new Set(wanted);
  for (const child of [...parent.childNodes]) if (!keep.has(child as Element)) child.remove();
  wanted.forEach((node, index) => {
    const at = parent.childNodes[index];
    if (at !== node) parent.insertBefore(typeof node === "string" ? document.createTextNode(node) : node, at ?? null);
  });
}

/** A field of a form: a label and its control (the control's id ties them), or any element. */
export type Field = readonly [label: string, control: HTMLElement] | HTMLElement;

/**
 * A titled form (``id``-title names it for screen readers) of labelled fields and a submit
 * button; ``submit`` runs when it is sent (the page does not reload).
 */
export function panelForm(id: string, title: string, fields: Field[], button: HTMLElement, submit: () => unknown): HTMLFormElement {
  const form = h(
    "form",
    { "aria-labelledby": `${id}-title`, class: "card-panel", id },
    h("h2", { id: `${id}-title` }, title),
    ...fields.flatMap((field) => (field instanceof HTMLElement ? [field] : [h("label", { for: field[1].id }, field[0]), field[1]])),
    button,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });
  return form;
}
