// A guided first game: at a practice table created with the guide, a panel explains each step
// of the first round as the table reaches it (your hand, the pile, how to play and pass,
// going out), then the roles and the exchange once round 1 is over, and then gets out of the
// way: no hint after round 1, and "Hide the guide" ends it at once. The guide is offered
// (ticked in the lobby) until it has been seen through or hidden once; this browser remembers
// that in localStorage (ticked again by hand, it runs again). Web only: the server knows
// nothing of it.

import type { TableView } from "@president/client/game";
import { fill, h } from "./dom";
import { withCardFaces } from "./seats";

/** "done" once the guide was seen through or hidden: it is no longer offered. */
const DONE_KEY = "president.guide";
/** The practice table the guide runs at. */
const TABLE_KEY = "president.guide-table";

/** Whether the lobby offers the guide (ticked): until it has been seen through or hidden. */
export function guideOffered(): boolean {
  return localStorage.getItem(DONE_KEY) !== "done";
}

/** The guide runs at this new practice table. */
export function guideTable(tableId: string): void {
  localStorage.setItem(TABLE_KEY, tableId);
}

function finish(): void {
  localStorage.setItem(DONE_KEY, "done");
  localStorage.removeItem(TABLE_KEY);
}

/** The step the table is at for the viewer, and what to say of it (null: nothing to say). */
function hint(view: TableView): [step: string, text: string] | null {
  const round = view.round;
  const me = view.viewerSeat;
  if (view.phase === "lobby") {
    return ["start", "Welcome to your first game. The other seats are bots, and they wait for you: press Start the game to deal round 1."];
  }
  if (view.phase === "between_rounds" && (round?.roundNo ?? 1) === 1) {
    return [
      "roles",
      "Round 1 is over: the first player out is the President, the last the Asshole (their roles stand beside their names), and everyone scored by place. " +
        "Before the next round comes the exchange: the lowest roles give their best cards to the highest, who give back cards of their choice " +
        "(the page marks the cards you receive New, and says how many to give back). That is all: from round 2 you play on your own.",
    ];
  }
  if (view.phase !== "round" || round === undefined || me === undefined) return null;
  if (round.finished.includes(me)) {
    return ["out", "You are out of cards. The others play on: the order in which everyone goes out gives the places, and the roles of the next round."];
  }
  if (round.toAct !== me) {
    return [
      "wait",
      "Your hand is at the bottom, lowest card first. Wait for your turn: the gold ring shows who plays now, and the middle of the table shows each play and pass of this trick.",
    ];
  }
  if (round.top.length === 0) {
    return [
      "lead",
      "Your turn, and the pile is empty: you lead. Tap a card, or several of one rank (a pair, three of a kind); the gold button says what you will play. Low cards are best led early.",
    ];
  }
  return [
    "beat",
    `The pile shows the last play (${round.top.join(" ")}). To beat it, play as many cards as it has, of a higher rank: the gold button says whether your choice does. ` +
      "Or Pass: you sit out until someone wins the trick, and the winner leads the next.",
  ];
}

export class Guide {
  private active: boolean;
  private readonly text = h("p", { id: "guide-hint", "aria-live": "polite" });
  /** Drawn once and kept: the live hint is read out when it changes. */
  private readonly element = h(
    "section",
    { id: "guide", class: "card-panel", "aria-labelledby": "guide-title" },
    h("h2", { id: "guide-title" }, "Your first game, step by step"),
    this.text,
    h("button", { id: "guide-hide", onclick: () => this.hide() }, "Hide the guide"),
  );

  constructor(
    tableId: string,
    private readonly redraw: () => void,
  ) {
    this.active = localStorage.getItem(TABLE_KEY) === tableId; // ticked again: shown again
  }

  /** The panel for ``view`` (null: no guide here, or it is over). */
  panel(view: TableView): HTMLElement | null {
    if (!this.active) return null;
    const past = view.gameNo > 1 || (view.round?.roundNo ?? 1) > 1 || view.phase === "game_over";
    if (past) {
      this.active = false;
      finish();
      return null;
    }
    const said = hint(view);
    if (said === null) return null;
    const [step, text] = said;
    if (this.text.dataset.said !== text) {
      fill(this.text, ...withCardFaces(text)); // "QD" shown as Q♦, read as "queen of diamonds"
      this.text.dataset.said = text;
    }
    this.element.dataset.step = step;
    return this.element;
  }

  private hide(): void {
    this.active = false;
    finish();
    this.redraw();
  }
}
