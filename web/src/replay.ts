// A finished game (or what is public of a game under way) replayed step by step from the
// table's log (GetActivity, as Check the deal reads it): every change in the server's words,
// with names. Each round's hands are shown once its secret is public, re-created in this
// browser from the secret with the same DEAL.md code as the deal check, and each round's
// deal is checked as the replay reaches it. Opened at #replay=<table id>, or at a game's first
// deal with #replay=<table id>&game=<n> (a table's later games, after Play again).

import { fromBinary } from "@bufbuild/protobuf";
import { CardsPlayedSchema, SeatTakenSchema } from "@president/client/events";
import type { ActivityItem } from "@president/client";
import { dealCommitted } from "../public/lib/events.js";
import type { DealWitness } from "../public/lib/events.js";
import { sentence } from "./api";
import { sortedHand } from "./cards";
import { LOST, type Verdict, checkRound, readLog, witnessLog } from "./dealcheck";
import { byId, fill, h } from "./dom";
import { cardFace, withCardFaces } from "./seats";

/** One step of the replay: a change, the round it belongs to, and the cards played so far. */
interface Step {
  item: ActivityItem;
  round: string;
  played: ReadonlySet<string>;
}

function eventName(item: ActivityItem): string {
  return item.event?.type.split(".").pop() ?? "";
}

/** The log's changes as steps: each knows its round ("game/round") and the cards played in it. */
function stepsOf(log: readonly ActivityItem[]): Step[] {
  let round = "";
  let played = new Set<string>();
  return log.map((item) => {
    const name = eventName(item);
    if (name === "DealCommitted" && item.event) {
      const committed = dealCommitted(item.event.payload);
      round = `${committed.gameNo || 1}/${committed.roundNo}`;
      played = new Set();
    } else if (name === "CardsPlayed" && item.event) {
      played = new Set([...played, ...fromBinary(CardsPlayedSchema, item.event.payload).cards]);
    }
    return { item, round, played };
  });
}

/** The address of a game's replay: the table, and the game to open at (none: the first). */
export function replayLink(tableId: string, game: number): string {
  const at = `#replay=${encodeURIComponent(tableId)}`;
  return game > 0 ? `${at}&game=${game}` : at;
}

/** Where game ``game`` starts: the step of its first deal (the table's first step for game 1
 * or none; -1 for a game the log does not hold yet). */
export function firstStepOfGame(steps: readonly { round: string }[], game: number): number {
  if (game <= 1) return 0;
  return steps.findIndex((step) => step.round.startsWith(`${game}/`));
}

export class ReplayPage {
  private steps: Step[] = [];
  private at = 0;
  private witness: DealWitness | null = null;
  private readonly names = new Map<number, string>();
  private readonly verdicts = new Map<string, Verdict | "checking">();

  constructor(
    readonly tableId: string,
    private readonly toTable: () => void,
    /** The game to open at (0 or 1: the table's first step). */
    private readonly game = 0,
  ) {}

  async open(): Promise<void> {
    fill(byId("side"));
    fill(byId("main"), h("p", { role: "status" }, "Reading the table's log…"));
    try {
      const log = await readLog(this.tableId);
      this.witness = witnessLog(log, null);
      for (const item of log) {
        if (eventName(item) === "SeatTaken" && item.event) {
          const taken = fromBinary(SeatTakenSchema, item.event.payload);
          this.names.set(taken.seat, taken.displayName || `seat ${taken.seat}`);
        }
      }
      this.steps = stepsOf(log);
      this.at = Math.max(0, firstStepOfGame(this.steps, this.game));
      this.render();
    } catch (error) {
      fill(byId("main"), h("p", { role: "alert" }, `The replay could not be read: ${sentence(error)}`));
      document.body.dataset.ready = "replay-error";
    }
  }

  close(): void {}

  private go(index: number): void {
    this.at = Math.max(0, Math.min(this.steps.length - 1, index));
    this.render();
    document.querySelector<HTMLElement>("#replay-step")?.focus();
  }

  /** The first step of the next round (or the last step). */
  private nextRound(): number {
    const round = this.steps[this.at]?.round;
    const next = this.steps.findIndex((step, index) => index > this.at && step.round !== round && step.round !== "");
    return next < 0 ? this.steps.length - 1 : next;
  }

  /** Check the round's deal once, when the replay first reaches it (and its secret is public). */
  private checkAsItGoes(round: string): Verdict | "checking" | undefined {
    const known = this.verdicts.get(round);
    const seen = this.witness?.rounds.get(round);
    if (known || !this.witness || !(seen?.secretHex || seen?.secretLost)) return known;
    this.verdicts.set(round, "checking");
    void checkRound(this.witness, round, (seat) => this.names.get(seat) ?? `seat ${seat}`).then((verdict) => {
      this.verdicts.set(round, verdict);
      this.render();
    });
    return "checking";
  }

  private render(): void {
    const step = this.steps[this.at];
    const total = this.steps.length;
    const button = (id: string, label: string, to: () => number, disabled: boolean): HTMLElement =>
      h("button", { id, "data-key": id, disabled, onclick: () => this.go(to()) }, label);
    const last = total - 1;
    fill(
      byId("main"),
      h(
        "header",
        { class: "bar" },
        h("h1", {}, `Replay of table ${this.tableId}`),
        h("button", { onclick: this.toTable }, "To the table"),
      ),
      h(
        "div",
        { id: "replay-controls", role: "group", "aria-label": "Replay controls", class: "menu-buttons" },
        button("replay-start", "« Start", () => 0, this.at === 0),
        button("replay-back", "◀ Back", () => this.at - 1, this.at === 0),
        button("replay-next", "Next ▶", () => this.at + 1, this.at >= last),
        button("replay-next-round", "Next round »", () => this.nextRound(), this.at >= last),
        button("replay-end", "End", () => last, this.at >= last),
      ),
      step
        ? h(
            "p",
            { id: "replay-step", tabindex: "-1", role: "status", "data-step": this.at + 1, "data-round": step.round },
            h("span", { class: "badge" }, `Step ${this.at + 1} of ${total}`),
            " ",
            ...withCardFaces(step.item.text),
          )
        : h("p", { id: "replay-step" }, "The table's log is empty."),
      step?.round ? this.roundPanel(step) : null,
      h(
        "ol",
        { id: "replay-recent", "aria-label": "The steps before" },
        ...this.steps.slice(Math.max(0, this.at - 6), this.at).map((s) => h("li", {}, ...withCardFaces(s.item.text))),
      ),
    );
    document.body.dataset.ready = "replay";
  }

  /** The round's deal check and, once its secret is public, its hands as dealt (played cards marked). */
  private roundPanel(step: Step): HTMLElement {
    const [game, number] = step.round.split("/");
    const verdict = this.checkAsItGoes(step.round);
    const title = h("h2", {}, `Round ${number} of game ${game}`);
    if (verdict === undefined) {
      return h("section", { id: "replay-round", "data-verdict": "secret" }, title, h("p", {}, "This round's secret is not public yet: its hands are shown once it is revealed, at the round's end."));
    }
    if (verdict === "checking") return h("section", { id: "replay-round", "data-verdict": "checking" }, title, h("p", {}, "Checking the deal…"));
    if (verdict.lost) {
      return h(
        "section",
        { id: "replay-round", "data-verdict": "lost" },
        title,
        h("p", { class: "verdict-bad", id: "replay-verdict" }, `✘ ${LOST}`),
      );
    }
    const hands = [...(verdict.hands ?? new Map<number, string[]>()).entries()].sort(([a], [b]) => a - b);
    return h(
      "section",
      { id: "replay-round", "data-verdict": verdict.ok ? "ok" : "bad" },
      title,
      h(
        "p",
        { class: verdict.ok ? "verdict-ok" : "verdict-bad", id: "replay-verdict" },
        verdict.ok ? "✔ The deal checks out: this browser re-created it from the revealed secret." : "✘ The deal does NOT check out.",
      ),
      verdict.ok ? null : h("ul", {}, ...verdict.checks.filter((c) => !c.ok).map((c) => h("li", {}, ...withCardFaces(c.text)))),
      h("h3", {}, "The hands as dealt (before any exchange); cards played so far are struck out"),
      h(
        "ul",
        { id: "replay-hands" },
        ...hands.map(([seat, cards]) =>
          h(
            "li",
            { "data-seat": seat },
            h("span", { class: "seat-name" }, this.names.get(seat) ?? `seat ${seat}`),
            h("span", { class: "pile" }, ...sortedHand(cards, false).map((card) => {
              const face = cardFace(card);
              if (step.played.has(card)) face.classList.add("played");
              return face;
            })),
          ),
        ),
      ),
    );
  }
}
