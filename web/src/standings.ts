// The results: the round just played (places, points, totals) and, when the game is over,
// the whole game's final standings: every seat's points round by round and its total.

import type { TableView } from "@president/client/game";
import { h } from "./dom";
import { ordinal, roleTitle } from "./places";
import { seatName } from "./seats";
import type { TableMemory } from "./tricklog";

function roundResults(view: TableView): HTMLElement | null {
  const round = view.round;
  if (!round) return null;
  const rows = round.standings.map((seat, place) => {
    const role = view.seats[seat]?.role;
    return h(
      "li",
      {},
      `${seatName(view, seat)}: ${ordinal(place)}${role ? ` (${roleTitle(role)})` : ""}, ${round.points[seat] ?? 0} point(s) this round, ${view.seats[seat]?.score ?? 0} in all`,
    );
  });
  return h("ol", { id: "round-results" }, ...rows);
}

/** The game's final standings: best total first (the winners first among equals). */
function finalStandings(view: TableView, memory: TableMemory): HTMLElement {
  const rounds = memory.rounds(view);
  const last = view.round?.standings ?? [];
  const seats = view.seats
    .filter((seat) => seat.occupied || last.includes(seat.seat))
    .map((seat) => seat.seat)
    .sort((a, b) => {
      const byScore = (view.seats[b]?.score ?? 0) - (view.seats[a]?.score ?? 0);
      if (byScore !== 0) return byScore;
      const winner = Number(view.winners.includes(b)) - Number(view.winners.includes(a));
      return winner !== 0 ? winner : last.indexOf(a) - last.indexOf(b);
    });
  const head = h(
    "tr",
    {},
    h("th", { scope: "col" }, "Place"),
    h("th", { scope: "col" }, "Player"),
    ...(rounds ?? []).map((_, index) => h("th", { scope: "col" }, `Round ${index + 1}`)),
    h("th", { scope: "col" }, "Total"),
  );
  const rows = seats.map((seat, place) => {
    const name = seatName(view, seat);
    const won = view.winners.includes(seat);
    return h(
      "tr",
      { "data-seat": seat, class: won ? "winner" : undefined },
      h("td", {}, ordinal(place)),
      h("th", { scope: "row" }, name.charAt(0).toUpperCase() + name.slice(1), won ? h("span", { class: "badge winner-mark" }, "winner") : null),
      ...(rounds ?? []).map((points) => h("td", { class: "points" }, String(points[seat] ?? 0))),
      h("td", { class: "total" }, String(view.seats[seat]?.score ?? 0)),
    );
  });
  return h(
    "table",
    { id: "final-standings" },
    h("caption", {}, rounds ? "The whole game, round by round" : "The whole game: the totals"),
    h("thead", {}, head),
    h("tbody", {}, ...rows),
  );
}

export function results(view: TableView, memory: TableMemory): HTMLElement | null {
  const round = view.round;
  if (!round || round.standings.length === 0 || !["between_rounds", "game_over"].includes(view.phase)) return null;
  const over = view.phase === "game_over";
  const winners = over
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
    h("h2", { id: "results-title" }, over ? "Final standings" : `Round ${round.roundNo}: the results`),
    winners,
    over ? finalStandings(view, memory) : null,
    over ? h("h3", {}, `Round ${round.roundNo}, the last`) : null,
    roundResults(view),
  );
}
