// The table: the seat's Watch stream drawn as it changes, the hand with its choice, the
// gold button (PreviewPlay's words before anything is sent), pass, the exchange, rapid
// races, reactions, the chat (the host mutes a seat), the host's controls, the results, and
// the ? menu (rules, activity, Check the deal, the receipts).

import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ChatPostedSchema, ReactionShownSchema, SeatMutedSchema, TimedOutSchema } from "@president/client/events";
import type { SeatView, TableView } from "@president/client/game";
import { HostChoice } from "@president/client";
import { commandId, gateway, identity, reasonOf, sentence, watchTable } from "./api";
import { rankOf, sortedHand } from "./cards";
import { announce, byId, fill, h, patch } from "./dom";
import { helpMenu } from "./menu";
import { TableReceipts } from "./receipts";
import { type HandState, HandPanel } from "./hand";
import { seatList, seatName, trickArea, turnText, withCardFaces } from "./seats";
import { results } from "./standings";
import { TableMemory } from "./tricklog";
import { TurnAlert } from "./alert";
import { leftTable, seatedAt } from "./yourseats";
import { replayLink } from "./replay";
import { ChatPanel } from "./chat";
import { Guide } from "./guide";
import { afterWatchEnded } from "./resume";

const REACTIONS: [string, string][] = [
  ["nice", "Nice!"],
  ["well_played", "Well played"],
  ["wow", "Wow"],
  ["ouch", "Ouch"],
];
const REACTION_SECONDS = 4;
/** A Watch stream that ends so (a drained edge, an expired token, a lost network) is resumed. */
const MAX_RESUMES = 5;

interface Preview {
  playable: boolean;
  text: string;
}

export class TablePage {
  view: TableView | null = null;
  private receivedAt = 0;
  private selected = new Set<string>();
  private preview: Preview | null = null;
  private previewAsked = 0;
  /** The trick version of the pile the preview was worked out on: the play answers that pile. */
  private previewTrick: number | undefined;
  private notice = "";
  /** The game, round and game over the notice belongs to: a new one clears it. */
  private stage = "";
  /** Leave was pressed once: the page asks before the seat is given up. */
  private confirmingLeave = false;
  private readonly reactions = new Map<number, string>();
  readonly receipts: TableReceipts;
  private readonly chat: ChatPanel;
  private readonly guide: Guide;
  /** The chat's earlier messages were asked for (once, at the first snapshot). */
  private chatRead = false;
  private readonly abort = new AbortController();
  private ticker = 0;
  /** Drawn once and updated in place: the countdown and the hand. */
  private readonly turn = h("p", { id: "turn", role: "timer", "aria-live": "off" });
  /** The table itself: the seats around it and the trick in its middle (each redrawn alone). */
  private readonly felt = h("section", { id: "felt", "aria-label": "The table" });
  private readonly memory = new TableMemory();
  private readonly alert = new TurnAlert();
  private readonly hand = new HandPanel(
    (card) => this.toggle(card),
    () => void this.send(),
    () => void this.pass(),
  );

  constructor(
    readonly tableId: string,
    private readonly toLobby: () => void,
  ) {
    this.receipts = new TableReceipts(tableId, identity.playerId);
    this.chat = new ChatPanel(tableId);
    this.guide = new Guide(tableId, () => this.render());
  }

  async open(): Promise<void> {
    this.ticker = window.setInterval(() => this.tick(), 250);
    fill(byId("main"), h("p", { role: "status" }, "Opening the table…"));
    fill(byId("side"), helpMenu(this));
    let failures = 0;
    let fromSnapshot = false;
    while (!this.abort.signal.aborted && !this.view?.closed) {
      try {
        // A stream cut off resumes after the last change; a rewound history starts over.
        const from = fromSnapshot ? 0n : (this.view?.version ?? 0n);
        fromSnapshot = false;
        failures += 1; // until a change arrives: a stream the server ends at once counts too
        const spectator = this.view?.viewerSeat === undefined; // not seated, or not known yet
        for await (const changes of watchTable(this.tableId, from, this.abort.signal, spectator)) {
          failures = 0;
          let newest: TableView | undefined;
          for (const change of changes) {
            if (change.snapshot && change.view && !this.chatRead) {
              this.chatRead = true;
              const at = change.view;
              void this.chat.earlier(at.version, (seat) => this.chatName(this.view ?? at, seat));
            }
            this.receipts.keep(change);
            if (change.view) this.enter(change.view);
            if (change.event) this.onEvent(change.event.type, change.event.payload, change.view);
            if (change.view) newest = change.view;
          }
          // Changes that came together are drawn once, as the newest: a deal's empty hand
          // and its cards a moment later are one drawing, not a flash of buttons replaced.
          if (newest) this.show(newest);
        }
      } catch (error) {
        if (this.abort.signal.aborted) return;
        const next = afterWatchEnded(error instanceof ConnectError ? error.code : Code.Unknown, reasonOf(error));
        if (next === "stop" || failures > MAX_RESUMES) {
          this.fail(`The table is not available: ${sentence(error)}`);
          return;
        }
        fromSnapshot = next === "snapshot";
      }
      if (failures > MAX_RESUMES) {
        this.fail("The table keeps closing its stream: try again later.");
        return;
      }
      await new Promise((resume) => setTimeout(resume, 500 * failures));
    }
  }

  /** A new round, a new game or the game's end: the last notice belongs to what came before. */
  private enter(view: TableView): void {
    const stage = `${view.gameNo}/${view.round?.roundNo ?? 0}/${view.phase === "game_over" ? "over" : ""}`;
    if (this.stage && stage !== this.stage) this.notice = "";
    this.stage = stage;
  }

  /** ``text``, unless the table moved to a new round or ended since ``stage`` (then nothing). */
  private noticeFor(stage: string, text: string): string {
    return stage === this.stage ? text : "";
  }

  private fail(text: string): void {
    fill(byId("main"), h("p", { role: "alert" }, ...withCardFaces(text)), h("button", { onclick: this.toLobby }, "Back to the lobby"));
    document.body.dataset.ready = "table-error";
  }

  close(): void {
    fill(byId("side"));
    this.abort.abort();
    window.clearInterval(this.ticker);
    this.alert.close();
  }

  private onEvent(type: string, payload: Uint8Array, view: TableView | undefined): void {
    const name = type.split(".").pop() ?? "";
    this.memory.take(name, payload, view);
    if (name === "ReactionShown") {
      const shown = fromBinary(ReactionShownSchema, payload);
      const symbol = REACTIONS.find(([code]) => code === shown.reaction)?.[1] ?? shown.reaction;
      this.reactions.set(shown.seat, symbol);
      setTimeout(() => {
        this.reactions.delete(shown.seat);
        if (this.view) this.render();
      }, REACTION_SECONDS * 1000);
    } else if (name === "ChatPosted") {
      const posted = fromBinary(ChatPostedSchema, payload);
      const at = view ?? this.view;
      this.chat.add(at ? this.chatName(at, posted.seat) : `seat ${posted.seat}`, posted.text);
    } else if (name === "SeatMuted") {
      const muted = fromBinary(SeatMutedSchema, payload);
      const at = view ?? this.view;
      this.chat.note(`The host ${muted.muted ? "muted" : "unmuted"} ${at ? seatName(at, muted.seat) : `seat ${muted.seat}`}.`);
    } else if (name === "TimedOut") {
      const seat = fromBinary(TimedOutSchema, payload).seat;
      const who = this.view && seat !== undefined ? seatName(this.view, seat) : "the table";
      this.notice = `Time ran out for ${who}: the server moved on${seat === this.view?.viewerSeat ? " for you" : ""}.`;
      announce(this.notice);
    }
  }

  /** Who wrote in the chat: "You", or the seat's name. */
  private chatName(view: TableView, seat: number): string {
    const who = seatName(view, seat);
    return who === "you" ? "You" : who;
  }

  private secondsLeft(): number | null {
    const view = this.view;
    if (!view || view.deadlineUnixMs === undefined) return null;
    const left = Number(view.deadlineUnixMs - view.serverNowUnixMs) - (Date.now() - this.receivedAt);
    return Math.max(0, Math.ceil(left / 1000));
  }

  /** The countdown's words, and nothing else: a tick redraws no other part of the page. */
  private tick(): void {
    if (!this.view) return;
    const text = turnText(this.view, this.secondsLeft());
    if (this.turn.textContent !== text) this.turn.textContent = text;
  }

  private show(view: TableView): void {
    const handBefore = this.view?.round?.hand.join(" ");
    const trickBefore = this.view?.round?.trickVersion;
    if (view.viewerSeat !== undefined && this.view?.viewerSeat === undefined) seatedAt(this.tableId);
    this.view = view;
    this.receivedAt = Date.now();
    this.alert.update(view);
    const hand = view.round?.hand ?? [];
    if (hand.join(" ") !== handBefore || view.round?.trickVersion !== trickBefore) {
      for (const card of [...this.selected]) if (!hand.includes(card)) this.selected.delete(card);
      this.preview = null;
      if (this.selected.size > 0) void this.askPreview();
    }
    this.render();
  }

  private replay(): void {
    location.hash = replayLink(this.tableId, this.view?.gameNo ?? 0).slice(1);
  }

  private isHost(view: TableView): boolean {
    return view.hostPlayerId !== "" && view.hostPlayerId === identity.playerId;
  }

  private exchangeOwed(view: TableView): number {
    return view.round?.phase === "exchange" ? view.round.returnOwed : 0;
  }

  private render(): void {
    const view = this.view;
    if (!view) return;
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.key;
    const round = view.round;
    const seated = view.viewerSeat !== undefined;
    // The hand is shown until the game is over (then its leftover cards mean nothing).
    const holding = seated && view.phase !== "game_over";
    patch(
      byId("main"),
      h(
        "header",
        { class: "bar", id: "table-bar" },
        h("h1", {}, `Table ${view.tableId}`),
        h("span", { id: "phase" }, `${view.options?.preset ?? ""} · ${view.visibility} · game ${view.gameNo}${round ? `, round ${round.roundNo}` : ""}`),
        seated ? null : h("span", { id: "spectating", class: "badge" }, "You are watching"),
        seated ? this.alert.button : null,
        h("button", { onclick: this.toLobby, "data-key": "lobby" }, "Lobby"),
      ),
      this.felt,
      this.turn,
      this.guide.panel(view),
      h("p", { id: "notice", role: "status" }, ...withCardFaces(this.notice)),
      results(view, this.memory),
      view.phase === "game_over" ? h("button", { id: "replay-link", "data-key": "replay-link", onclick: () => this.replay() }, "Replay the game step by step") : null,
      holding ? this.hand.element : null,
      seated ? this.reactionBar() : null,
      this.chat.element,
      this.hostControls(view),
      seated ? this.leaveControls(view) : null,
    );
    this.chat.seat(seated && !view.closed, seated && view.seats[view.viewerSeat ?? 0]?.muted === true);
    patch(this.felt, seatList(view, this.reactions, this.memory), trickArea(view, this.memory));
    this.felt.dataset.of = String(view.seats.length);
    this.tick();
    if (holding) this.hand.update(this.handState(view));
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (focused && lost) document.querySelector<HTMLElement>(`[data-key="${CSS.escape(focused)}"]`)?.focus();
    document.body.dataset.ready = "table";
    document.body.dataset.phase = view.phase;
    document.body.dataset.deadline = view.deadlineKind; // which timer runs: "bots" while they wait
    document.body.dataset.version = String(view.version);
    document.body.dataset.trick = String(round?.trickVersion ?? 0);
  }

  /** The hand area's state from the view and the choice (the panel writes only what changed). */
  private handState(view: TableView): HandState {
    const round = view.round;
    const owed = this.exchangeOwed(view);
    const received = new Set(round?.newCards ?? []);
    const exchange = owed > 0
      ? `The exchange: give ${owed} card${owed === 1 ? "" : "s"} back to ${seatName(view, round?.returnTo)}. Cards marked New are the ones you received.`
      : received.size > 0 && round?.phase === "exchange"
        ? "The exchange: the cards marked New are the ones you received."
        : "";
    return {
      cards: sortedHand(round?.hand ?? [], round?.revolution ?? false),
      chosen: this.selected,
      received,
      playable: new Set((round?.legal ?? []).filter((a) => a.verb === "play").flatMap((a) => a.cards)),
      exchange,
      gold: this.goldText(view),
      canSend: this.canSend(view),
      canPass: (round?.legal ?? []).some((a) => a.verb === "pass"),
      note: this.preview && !this.preview.playable ? this.preview.text : "",
    };
  }

  private goldText(view: TableView): string {
    const owed = this.exchangeOwed(view);
    if (owed > 0) {
      const n = this.selected.size;
      return n === owed ? `Give back ${n} card${n === 1 ? "" : "s"}` : `Choose ${owed} card${owed === 1 ? "" : "s"} to give back`;
    }
    if (this.selected.size === 0) return "Choose cards to play";
    if (this.preview?.playable) return this.preview.text;
    return this.preview ? "Cannot play these" : "…";
  }

  private canSend(view: TableView): boolean {
    const owed = this.exchangeOwed(view);
    if (owed > 0) return this.selected.size === owed;
    return this.selected.size > 0 && this.preview?.playable === true;
  }

  private toggle(card: string): void {
    if (this.selected.has(card)) this.selected.delete(card);
    else {
      const exchanging = this.view !== null && this.exchangeOwed(this.view) > 0;
      if (!exchanging) for (const other of [...this.selected]) if (rankOf(other) !== rankOf(card)) this.selected.delete(other);
      this.selected.add(card);
    }
    this.preview = null;
    this.render();
    if (this.view && this.exchangeOwed(this.view) === 0 && this.selected.size > 0) void this.askPreview();
  }

  private async askPreview(): Promise<void> {
    const asked = ++this.previewAsked;
    const cards = [...this.selected];
    const trick = this.view?.round?.trickVersion;
    try {
      const answer = await gateway.previewPlay({ tableId: this.tableId, cards });
      if (asked !== this.previewAsked) return;
      this.previewTrick = trick;
      document.body.dataset.previewTrick = String(trick ?? 0); // the pile a play now names
      this.preview = answer.playable
        ? { playable: true, text: answer.label }
        : { playable: false, text: answer.refused?.message ?? "This play cannot be made now." };
    } catch (error) {
      if (asked !== this.previewAsked) return;
      this.preview = { playable: false, text: sentence(error) };
    }
    this.render();
  }

  private async send(): Promise<void> {
    const view = this.view;
    if (!view) return;
    const cards = [...this.selected];
    const stage = this.stage;
    this.notice = "Sending…";
    this.render();
    try {
      if (this.exchangeOwed(view) > 0) {
        await gateway.returnCards({ tableId: this.tableId, cards, commandId: commandId() });
        this.notice = this.noticeFor(stage, `You gave back ${cards.length} card(s).`);
      } else {
        const label = this.preview?.text ?? "";
        await gateway.play({ tableId: this.tableId, cards, trickVersion: this.previewTrick, commandId: commandId() });
        this.notice = label ? this.noticeFor(stage, `You played: ${label.replace(/^Play /, "")}.`) : "";
      }
      this.selected.clear();
      this.preview = null;
    } catch (error) {
      this.notice =
        reasonOf(error) === "STALE"
          ? "Someone played first: the trick moved on, and your cards stay in your hand."
          : `Refused: ${sentence(error)}`;
    }
    announce(this.notice);
    this.render();
  }

  private async pass(): Promise<void> {
    const stage = this.stage;
    this.notice = "Sending…";
    this.render();
    try {
      await gateway.pass({ tableId: this.tableId, trickVersion: this.view?.round?.trickVersion, commandId: commandId() });
      this.selected.clear();
      this.preview = null;
      this.notice = this.noticeFor(stage, "You passed.");
    } catch (error) {
      this.notice = reasonOf(error) === "STALE" ? "The trick moved on before your pass." : `Refused: ${sentence(error)}`;
    }
    announce(this.notice);
    this.render();
  }

  private reactionBar(): HTMLElement {
    return h(
      "div",
      { id: "reactions", role: "group", "aria-label": "Reactions" },
      ...REACTIONS.map(([code, symbol]) =>
        h("button", { "data-key": `react-${code}`, "aria-label": `React ${code.replace(/_/g, " ")}`, onclick: () => void this.react(code) }, symbol),
      ),
    );
  }

  private async react(code: string): Promise<void> {
    try {
      await gateway.react({ tableId: this.tableId, reaction: code });
    } catch (error) {
      this.notice = `Refused: ${sentence(error)}`;
      this.render();
    }
  }

  private hostControls(view: TableView): HTMLElement | null {
    if (!this.isHost(view) || view.closed) return null;
    const button = (label: string, key: string, act: () => Promise<unknown>): HTMLElement =>
      h("button", { "data-key": key, id: key, onclick: () => void this.command(act) }, label);
    const choice = (value: HostChoice) => () => gateway.hostAction({ tableId: this.tableId, choice: value, commandId: commandId() });
    const controls: HTMLElement[] = [];
    const others = view.seats.filter((s) => s.occupied && !s.isBot && !s.left && s.playerId !== view.hostPlayerId);
    if (view.phase === "lobby") {
      controls.push(button("Start the game", "start", () => gateway.startGame({ tableId: this.tableId, commandId: commandId() })));
      if (view.visibility !== "practice" && view.seats.some((s) => !s.occupied)) {
        controls.push(button("Add a bot", "add-bot", () => gateway.addBot({ tableId: this.tableId })));
      }
    } else if (view.phase === "between_rounds") {
      controls.push(button("Deal the next round", "next-round", choice(HostChoice.NEXT_ROUND)));
      controls.push(button("End the game", "end-game", choice(HostChoice.END_GAME)));
    } else if (view.phase === "game_over") {
      controls.push(button("Play again", "play-again", choice(HostChoice.PLAY_AGAIN)));
      controls.push(button("Back to the table's lobby", "back-to-lobby", choice(HostChoice.BACK_TO_LOBBY)));
    }
    if (others.length > 0) controls.push(this.muteControls(others), this.handOver(others));
    if (controls.length === 0) return null;
    return h("section", { id: "host", "aria-labelledby": "host-title" }, h("h2", { id: "host-title" }, "You are the host"), ...controls);
  }

  /** Mute or unmute each other person's chat (``others``: the seated people). */
  private muteControls(others: SeatView[]): HTMLElement {
    const toggle = async (seat: SeatView): Promise<void> => {
      const name = seat.displayName || `seat ${seat.seat}`;
      try {
        await gateway.muteSeat({ tableId: this.tableId, seat: seat.seat, muted: !seat.muted, commandId: commandId() });
        this.notice = seat.muted ? `${name} may chat again.` : `${name} is muted: their messages are refused.`;
      } catch (error) {
        this.notice = `Refused: ${sentence(error)}`;
      }
      announce(this.notice);
      this.render();
    };
    return h(
      "div",
      { id: "mute", role: "group", "aria-label": "Chat: mute a player" },
      ...others.map((seat) => {
        const name = seat.displayName || `seat ${seat.seat}`;
        return h(
          "button",
          { id: `mute-${seat.seat}`, "data-key": `mute-${seat.seat}`, "aria-pressed": seat.muted ? "true" : "false", onclick: () => void toggle(seat) },
          seat.muted ? `Unmute ${name}` : `Mute ${name}`,
        );
      }),
    );
  }

  /** The host role to another person at the table (``others``: the seated people). */
  private handOver(others: SeatView[]): HTMLElement {
    const to = h("select", { id: "new-host", "data-key": "new-host" }, ...others.map((s) => h("option", { value: String(s.seat) }, s.displayName || `seat ${s.seat}`)));
    const give = async (): Promise<void> => {
      const seat = Number(to.value);
      const name = to.selectedOptions[0]?.textContent ?? `seat ${seat}`;
      try {
        await gateway.handOverHost({ tableId: this.tableId, seat, commandId: commandId() });
        this.notice = `${name} is the host now.`;
      } catch (error) {
        this.notice = `Refused: ${sentence(error)}`;
      }
      announce(this.notice);
      this.render();
    };
    return h(
      "div",
      { id: "hand-over", class: "inline-form" },
      h("label", { for: "new-host" }, "New host"),
      to,
      h("button", { id: "hand-over-host", "data-key": "hand-over-host", onclick: () => void give() }, "Hand over host"),
    );
  }

  /** Leave the table: asked once more first (a bot plays the seat for the rest of the round). */
  private leaveControls(view: TableView): HTMLElement | null {
    if (view.closed) return null;
    if (!this.confirmingLeave) {
      return h(
        "section",
        { id: "leave", "aria-label": "Your seat" },
        h("button", { id: "leave-table", "data-key": "leave-table", onclick: () => this.askLeave(true) }, "Leave the table"),
      );
    }
    const during = view.phase === "round" ? " A bot plays your cards for the rest of the round." : "";
    return h(
      "section",
      { id: "leave", "aria-label": "Your seat" },
      h("p", { id: "leave-question" }, `Give up your seat and leave the table?${during}${this.isHost(view) ? " The next person at the table becomes the host." : ""}`),
      h("button", { id: "leave-yes", "data-key": "leave-yes", onclick: () => void this.leaveTable() }, "Yes, leave"),
      h("button", { id: "leave-no", "data-key": "leave-no", onclick: () => this.askLeave(false) }, "Stay"),
    );
  }

  private askLeave(asking: boolean): void {
    this.confirmingLeave = asking;
    this.render();
    document.getElementById(asking ? "leave-no" : "leave-table")?.focus();
  }

  private async leaveTable(): Promise<void> {
    try {
      await gateway.leave({ tableId: this.tableId });
      leftTable(this.tableId);
      announce("You left the table.");
      this.toLobby();
    } catch (error) {
      this.confirmingLeave = false;
      this.notice = `Refused: ${sentence(error)}`;
      this.render();
    }
  }

  private async command(act: () => Promise<unknown>): Promise<void> {
    try {
      await act();
      this.notice = "";
    } catch (error) {
      this.notice = `Refused: ${sentence(error)}`;
      this.render();
    }
  }
}
