// What the table shows of everyone: the seats (name, role, card count, presence, score,
// reactions), the top of the trick, whose turn it is with its countdown, and the results.

import type { SeatView, TableView } from "../gen/president/game/v1/game_pb";
import { cardsInText, face, isRed, spoken } from "./cards";
import { h } from "./dom";

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

function seatItem(view: TableView, seat: SeatView, reaction: string | undefined): HTMLElement {
  const round = view.round;
  const turn = round?.phase === "play" && round.toAct === seat.seat;
  const mine = view.viewerSeat === seat.seat;
  const details: string[] = [];
  if (seat.role) details.push(seat.role);
  if (round && view.phase !== "lobby") details.push(`${seat.cardCount} card${seat.cardCount === 1 ? "" : "s"}`);
  details.push(`score ${seat.score}`);
  if (!seat.isBot) details.push(seat.connected ? "here" : "away");
  if (round?.outOfTrick.includes(seat.seat)) details.push("passed");
  const place = round?.finished.indexOf(seat.seat) ?? -1;
  if (place >= 0) details.push(`out ${place + 1}${["st", "nd", "rd"][place] ?? "th"}`);
  const name = seat.occupied ? seat.displayName || `seat ${seat.seat}` : "empty seat";
  return h(
    "li",
    {
      class: `seat${turn ? " turn" : ""}${mine ? " me" : ""}${seat.occupied ? "" : " empty"}`,
      "data-seat": seat.seat,
      "aria-current": turn ? "true" : undefined,
    },
    h("span", { class: "seat-name" }, name, mine ? " (you)" : "", seat.isBot ? " (bot)" : ""),
    h("span", { class: "seat-details" }, details.join(" · ")),
    reaction ? h("span", { class: "reaction", role: "status" }, reaction) : null,
  );
}

export function seatList(view: TableView, reactions: Map<number, string>): HTMLElement {
  return h(
    "ol",
    { id: "seats", "aria-label": "The seats" },
    ...view.seats.map((seat) => seatItem(view, seat, reactions.get(seat.seat))),
  );
}

export function trickArea(view: TableView): HTMLElement | null {
  const round = view.round;
  const top = round?.top ?? [];
  // A revolution lasts for its round: between rounds and after the game it is over.
  const revolution =
    round?.revolution && view.phase === "round" ? h("p", { id: "revolution", class: "badge" }, "Revolution: the order is reversed") : null;
  if (!round || round.phase !== "play") {
    return revolution ? h("section", { id: "trick", "aria-label": "The pile" }, revolution) : null;
  }
  return h(
    "section",
    { id: "trick", "aria-label": "The pile" },
    top.length === 0
      ? h("p", {}, "The pile is empty: the leader plays anything.")
      : h(
          "p",
          {},
          `On the pile, by ${seatName(view, round.topSeat)}: `,
          h("span", { class: "pile" }, ...top.map((card) => cardFace(card))),
        ),
    revolution,
  );
}

/** Whose turn, and how long is left (seconds from the view's deadline and the server's clock). */
export function turnText(view: TableView, secondsLeft: number | null): string {
  const left = secondsLeft === null ? "" : `: ${secondsLeft} s left`;
  const round = view.round;
  if (view.deadlineKind === "rapid") return `Anyone may play${left}`;
  if (view.deadlineKind === "exchange") return `The exchange: returns are due${left}`;
  if (round?.phase === "play" && round.toAct !== undefined) {
    return round.toAct === view.viewerSeat ? `Your turn${left}` : `${seatName(view, round.toAct)}'s turn${left}`;
  }
  if (view.phase === "lobby") return "Waiting for the host to start the game.";
  if (view.phase === "between_rounds") return "Between rounds: the host deals the next one.";
  if (view.phase === "game_over") return "The game is over.";
  return "";
}

export function results(view: TableView): HTMLElement | null {
  const round = view.round;
  if (!round || round.standings.length === 0 || !["between_rounds", "game_over"].includes(view.phase)) return null;
  const rows = round.standings.map((seat, place) =>
    h(
      "li",
      {},
      `${seatName(view, seat)}: ${place + 1}${["st", "nd", "rd"][place] ?? "th"}, ${round.points[seat] ?? 0} point(s) this round, ${view.seats[seat]?.score ?? 0} in all`,
    ),
  );
  const winners =
    view.phase === "game_over"
      ? h(
          "p",
          { id: "winners", class: "badge" },
          view.stopped
            ? "The game was stopped: no winner."
            : `The game is won by ${view.winners.map((seat) => seatName(view, seat)).join(" and ")}.`,
        )
      : null;
  return h(
    "section",
    { id: "results", "aria-labelledby": "results-title" },
    h("h2", { id: "results-title" }, `Round ${round.roundNo}: the results`),
    h("ol", {}, ...rows),
    winners,
  );
}
