// What the table's events tell that its view does not: the current trick play by play (who
// played what, who passed), who went out on a 2 (and so took a bottom place), and each
// round's points in this game. Kept from the Watch stream's events as they pass by; a page
// that joined late knows less, and says only what it knows.

import { fromBinary } from "@bufbuild/protobuf";
import type { TableView } from "@president/client/game";
import {
  CardsPlayedSchema,
  PassedSchema,
  PlayerWentOutSchema,
  RoundEndedSchema,
  TrickClosedSchema,
} from "@president/client/events";

/** One move in the trick: a play (its cards), or a pass (no cards). */
export interface TrickMove {
  seat: number;
  cards: string[];
}

export class TableMemory {
  /** The current trick's moves, oldest first (after a close: the closed trick's, until the next play). */
  trick: TrickMove[] = [];
  /** The seat that won the trick shown, once it closed. */
  trickWinner: number | undefined;
  /** Seats that emptied their hand with 2s this round (finish_with_two: a bottom place). */
  readonly penalised = new Set<number>();
  /** Points by seat of each round of this game seen ended, by round number. */
  readonly roundPoints = new Map<number, number[]>();
  /** Whether every round of this game was seen from its start (else the totals stand alone). */
  private wholeGame = false;
  /** Counts every move seen: the newest move is drawn as arriving. */
  moves = 0;

  /** Take one event in (``view``: the table after it, when the change carried one). */
  take(name: string, payload: Uint8Array, view: TableView | undefined): void {
    if (name === "GameStarted") {
      this.roundPoints.clear();
      this.wholeGame = true;
    } else if (name === "RoundStarted" || name === "PlayStarted") {
      this.trick = [];
      this.trickWinner = undefined;
      if (name === "RoundStarted") this.penalised.clear();
    } else if (name === "CardsPlayed") {
      const played = fromBinary(CardsPlayedSchema, payload);
      this.move({ seat: played.seat, cards: [...played.cards] });
    } else if (name === "Passed") {
      this.move({ seat: fromBinary(PassedSchema, payload).seat, cards: [] });
    } else if (name === "TrickClosed") {
      this.trickWinner = fromBinary(TrickClosedSchema, payload).winner;
    } else if (name === "PlayerWentOut") {
      const out = fromBinary(PlayerWentOutSchema, payload);
      if (out.penalised) this.penalised.add(out.seat);
    } else if (name === "RoundEnded") {
      const ended = fromBinary(RoundEndedSchema, payload);
      const roundNo = view?.round?.roundNo;
      if (roundNo !== undefined) this.roundPoints.set(roundNo, [...ended.points]);
    }
  }

  private move(move: TrickMove): void {
    if (this.trickWinner !== undefined) {
      this.trick = []; // the closed trick stayed in sight until this first move of the next
      this.trickWinner = undefined;
    }
    this.trick.push(move);
    this.moves += 1;
  }

  /** The rounds of this game with their points, when every one of them was seen; else null. */
  rounds(view: TableView): number[][] | null {
    const last = view.round?.roundNo ?? 0;
    if (!this.wholeGame || last === 0) return null;
    const rounds: number[][] = [];
    for (let roundNo = 1; roundNo <= last; roundNo++) {
      const points = this.roundPoints.get(roundNo);
      if (!points) return null;
      rounds.push(points);
    }
    return rounds;
  }

  /** The trick's moves, when they agree with the view's pile (else only the pile is known). */
  movesFor(view: TableView): TrickMove[] {
    const top = view.round?.top ?? [];
    const plays = this.trick.filter((move) => move.cards.length > 0);
    const last = plays[plays.length - 1];
    const agrees =
      top.length === 0
        ? this.trickWinner !== undefined || plays.length === 0
        : last !== undefined && last.seat === view.round?.topSeat && same(last.cards, top);
    if (agrees && (top.length > 0 || this.trickWinner !== undefined)) return this.trick;
    if (top.length === 0) return [];
    return [{ seat: view.round?.topSeat ?? 0, cards: [...top] }];
  }
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(" ") === [...b].sort().join(" ");
}
