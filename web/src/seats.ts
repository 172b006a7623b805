// What the table shows of everyone: the seats around it (name, role, card count, presence,
// score, reactions, muted), the trick play by play, whose turn it is with its countdown, and the results.

import type { SeatView, TableView } from "@president/client/game";
import { cardsInText, face, isRed, spoken } from "./cards";
import { h } from "./dom";
import { outText, roleTitle } from "./places";
import type { TableMemory, TrickMove } from "./tricklog";

export function seatName(view: TableView, seat: number | undefined): string {
  if (seat === undefined) return "nobody";
  if (seat === view.viewerSeat) return "you";
  return view.seats[seat]?.displayName || `seat ${seat}`;
}

export function cardFace(card: string, className = "card"): HTMLElement {
  return h("span", { class: `${className}${isRed(card) ? " red" : ""}`, "aria-label": spoken(card), role: "img" }, face(card));
}

/** A sentence with its cards shown as faces ("2♦"), each read out by name ("2 of diamonds"). */
export function withCardFaces(text: string): (HTMLElement | string)[] {
  return cardsInText(text).map((part) => (typeof part === "string" ? part : cardFace(part.card, "card-name")));
}

/** Where a seat went out this round, and why its place differs when it went out on a 2. */
function wentOut(view: TableView, seat: number, penalised: ReadonlySet<number>): string {
  const round = view.round;
  const out = round?.finished.indexOf(seat) ?? -1;
  if (out < 0) return "";
  const over = round?.phase === "over" || view.phase === "between_rounds" || view.phase === "game_over";
  return outText({
    out,
    place: over ? (round?.standings.indexOf(seat) ?? -1) : -1,
    penalised: penalised.has(seat),
    finishWithTwo: view.options?.options.finish_with_two === "true",
  });
}

function seatItem(view: TableView, seat: SeatView, reaction: string | undefined, memory: TableMemory): HTMLElement {
  const round = view.round;
  const turn = round?.phase === "play" && round.toAct === seat.seat;
  const mine = view.viewerSeat === seat.seat;
  const details: string[] = [];
  if (seat.role) details.push(roleTitle(seat.role));
  if (round && view.phase !== "lobby" && seat.occupied) details.push(`${seat.cardCount} card${seat.cardCount === 1 ? "" : "s"}`);
  if (seat.occupied) details.push(`score ${seat.score}`);
  if (seat.occupied && !seat.isBot) details.push(seat.connected ? "here" : "away");
  if (seat.muted) details.push("muted");
  if (round?.outOfTrick.includes(seat.seat)) details.push("passed");
  const out = wentOut(view, seat.seat, memory.penalised);
  const name = seat.occupied ? seat.displayName || `seat ${seat.seat}` : "empty seat";
  const count = view.seats.length;
  // The viewer sits at the bottom; the others follow clockwise in seat order.
  const position = (seat.seat - (view.viewerSeat ?? 0) + count) % count;
  return h(
    "li",
    {
      class: `seat${turn ? " turn" : ""}${mine ? " me" : ""}${seat.occupied ? "" : " empty"}${seat.isBot ? " bot" : ""}`,
      "data-seat": seat.seat,
      "data-pos": position,
      "aria-current": turn ? "true" : undefined,
    },
    h("span", { class: "seat-name" }, name, mine ? " (you)" : "", seat.isBot ? " (bot)" : ""),
    h("span", { class: "seat-details" }, details.join(" · ")),
    out ? h("span", { class: "seat-out" }, out) : null,
    turn ? h("span", { class: "seat-turn" }, mine ? "your turn" : "to play") : null,
    reaction ? h("span", { class: "reaction", role: "status" }, reaction) : null,
  );
}

/** The seats around the table (an oval on a wide screen), with the trick in its middle. */
export function seatList(view: TableView, reactions: Map<number, string>, memory: TableMemory): HTMLElement {
  return h(
    "ol",
    { id: "seats", "aria-label": "The seats, clockwise", "data-of": view.seats.length },
    ...view.seats.map((seat) => seatItem(view, seat, reactions.get(seat.seat), memory)),
  );
}

function moveItem(view: TableView, move: TrickMove, fresh: boolean): HTMLElement {
  const who = seatName(view, move.seat);
  const cards = move.cards.length
    ? h("span", { class: "pile" }, ...move.cards.map((card) => cardFace(card)))
    : h("span", { class: "passed" }, "passed");
  return h(
    "li",
    { class: `move${move.cards.length ? " play" : " pass"}${fresh ? " fresh" : ""}`, "data-seat": move.seat },
    h("span", { class: "move-who" }, who.charAt(0).toUpperCase() + who.slice(1)),
    cards,
  );
}

export function trickArea(view: TableView, memory: TableMemory): HTMLElement | null {
  const round = view.round;
  // A revolution lasts for its round: between rounds and after the game it is over.
  const revolution =
    round?.revolution && view.phase === "round" ? h("p", { id: "revolution", class: "badge" }, "Revolution: the order is reversed") : null;
  if (!round || round.phase !== "play") {
    return h("section", { id: "trick", "aria-label": "The trick" }, revolution);
  }
  const moves = memory.movesFor(view);
  const closed = memory.trickWinner !== undefined && moves === memory.trick && moves.length > 0;
  return h(
    "section",
    { id: "trick", "aria-label": "The trick", "data-moves": memory.moves },
    moves.length === 0
      ? h("p", { class: "trick-note" }, "The pile is empty: the leader plays anything.")
      : h("ol", { class: "moves", "aria-label": "The trick so far, oldest first" }, ...moves.map((move, i) => moveItem(view, move, i === moves.length - 1))),
    closed ? h("p", { class: "trick-note" }, `Trick won by ${seatName(view, memory.trickWinner)}.`) : null,
    revolution,
  );
}

/** The timers a seat's person acts against (the server's own steps and waits are not). */
const SEAT_TIMERS = new Set(["turn", "takeover", "rapid", "exchange"]);

/** Who is away as host, and when the role passes on (the ``host_away`` wait: its seat is the
 * host's). */
function hostAwayText(view: TableView, secondsLeft: number): string {
  const seat = view.deadlineSeat;
  const away =
    seat === undefined ? "The host is" : seat === view.viewerSeat ? "You, the host, are" : `${seatName(view, seat)}, the host, is`;
  return `${away} away: the host role passes to the next person here in ${secondsLeft} s.`;
}

/** Whose turn, and how long is left (seconds from the view's deadline and the server's clock);
 * between rounds, after a game and at an empty table, when the timer moves the table on; and
 * when an away host's role passes on. */
export function turnText(view: TableView, secondsLeft: number | null): string {
  const kind = view.deadlineKind;
  const left = secondsLeft === null || !SEAT_TIMERS.has(kind) ? "" : `: ${secondsLeft} s left`;
  const waiting = secondsLeft === null || kind !== "between_rounds" ? null : secondsLeft;
  const round = view.round;
  if (kind === "closing" && secondsLeft !== null) return `Nobody is left at the table: it closes in ${secondsLeft} s.`;
  if (kind === "host_away" && secondsLeft !== null) return hostAwayText(view, secondsLeft);
  if (kind === "rapid") return `Anyone may play${left}`;
  if (kind === "exchange") return `The exchange: returns are due${left}`;
  if (round?.phase === "play" && round.toAct !== undefined) {
    return round.toAct === view.viewerSeat ? `Your turn${left}` : `${seatName(view, round.toAct)}'s turn${left}`;
  }
  if (view.phase === "lobby") return "Waiting for the host to start the game.";
  if (view.phase === "between_rounds") {
    // With no set end the timer ends the game instead (the table's MoveOn).
    const byItself = view.options?.options.game_end === "unlimited" ? "the game ends by itself" : "it is dealt by itself";
    return waiting === null ? "Between rounds: the host deals the next one." : `Between rounds: the host deals the next one, or ${byItself} in ${waiting} s.`;
  }
  if (view.phase === "game_over") {
    return waiting === null ? "The game is over." : `The game is over: the table goes back to its lobby in ${waiting} s, unless the host chooses first.`;
  }
  return "";
}
