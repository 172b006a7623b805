// The seat's hand and its buttons, drawn once and then updated in place: a card's button
// lives as long as the card is in the hand (a change of view, presence or countdown never
// replaces it, so a tap in progress lands and a keyboard user's focus stays where it is);
// only the attributes and words that changed are written.

import { isRed } from "./cards";
import { fill, h } from "./dom";
import { cardFace, withCardFaces } from "./seats";

/** Everything the hand area shows, worked out by the table from its view and choice. */
export interface HandState {
  cards: readonly string[];
  chosen: ReadonlySet<string>;
  received: ReadonlySet<string>;
  playable: ReadonlySet<string>;
  exchange: string;
  gold: string;
  canSend: boolean;
  canPass: boolean;
  note: string;
}

function setAttribute(element: Element, name: string, value: string | undefined): void {
  if (value === undefined) {
    if (element.hasAttribute(name)) element.removeAttribute(name);
  } else if (element.getAttribute(name) !== value) element.setAttribute(name, value);
}

function setText(element: Element, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

function setDisabled(button: HTMLButtonElement, disabled: boolean): void {
  if (button.disabled !== disabled) button.disabled = disabled;
}

export class HandPanel {
  readonly element: HTMLElement;
  private readonly title = h("h2", { id: "hand-title" });
  private readonly exchange = h("p", { id: "exchange", role: "status", hidden: true });
  private readonly hand = h("div", { id: "hand", role: "group", "aria-label": "Your cards: choose cards of one rank" });
  private readonly gold: HTMLButtonElement;
  private readonly passButton: HTMLButtonElement;
  private readonly note = h("p", { id: "play-note", role: "status" });
  private readonly buttons = new Map<string, HTMLButtonElement>();
  private noteText = "";

  constructor(
    private readonly toggle: (card: string) => void,
    play: () => void,
    pass: () => void,
  ) {
    this.gold = h("button", { id: "play", class: "gold", "data-key": "play", onclick: play });
    this.passButton = h("button", { id: "pass", "data-key": "pass", onclick: pass }, "Pass");
    this.element = h(
      "section",
      { id: "hand-area", "aria-labelledby": "hand-title" },
      this.title,
      this.exchange,
      this.hand,
      h("div", { class: "actions" }, this.gold, this.passButton),
      this.note,
    );
  }

  update(state: HandState): void {
    setText(this.title, `Your hand (${state.cards.length})`);
    setText(this.exchange, state.exchange);
    this.exchange.hidden = state.exchange === "";
    const held = new Set(state.cards);
    for (const [card, button] of this.buttons) {
      if (!held.has(card)) {
        button.remove();
        this.buttons.delete(card);
      }
    }
    state.cards.forEach((card, index) => {
      const button = this.buttons.get(card) ?? this.cardButton(card);
      this.showCard(button, card, state);
      if (this.hand.children[index] !== button) this.hand.insertBefore(button, this.hand.children[index] ?? null);
    });
    setText(this.gold, state.gold);
    setDisabled(this.gold, !state.canSend);
    setDisabled(this.passButton, !state.canPass);
    if (this.noteText !== state.note) {
      this.noteText = state.note;
      fill(this.note, ...withCardFaces(state.note));
    }
  }

  private cardButton(card: string): HTMLButtonElement {
    const button = h("button", { "data-card": card, "data-key": `card-${card}`, onclick: () => this.toggle(card) }, cardFace(card, "face"));
    this.buttons.set(card, button);
    return button;
  }

  private showCard(button: HTMLButtonElement, card: string, state: HandState): void {
    const isNew = state.received.has(card);
    const chosen = state.chosen.has(card);
    setAttribute(button, "class", `card${chosen ? " chosen" : ""}${isNew ? " new" : ""}${isRed(card) ? " red" : ""}`);
    setAttribute(button, "data-playable", state.playable.has(card) ? "true" : undefined);
    setAttribute(button, "aria-pressed", chosen ? "true" : "false");
    // Named by its face (an image named "jack of clubs") and its New mark: an aria-label
    // would hide the visible "J♣" from the name (axe: label-content-name-mismatch).
    const mark = button.querySelector(".new-mark");
    if (isNew && !mark) button.append(h("span", { class: "new-mark" }, "New"));
    if (!isNew && mark) mark.remove();
  }
}
