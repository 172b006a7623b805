// Check the deal, in the browser: read the table's log as this seat may see it (GetActivity's
// pages, each event redacted for the reader exactly as Watch sends it: the fingerprint and
// deal order before each deal, its hand as dealt, its exchange, the revealed secret),
// re-create a finished round with Web Crypto (public/lib: DEAL.md in JavaScript) and say in
// words what agreed and what did not. The log, not a Watch from version 1: a Watch replays
// only the gateway's recent changes, and a long game's first rounds are older than that.

import { toJson } from "@bufbuild/protobuf";
import { EventEnvelopeSchema } from "@president/client/events";
import type { ActivityItem } from "@president/client";
import { checkSeatDeal } from "../public/lib/check.js";
import { DealWitness } from "../public/lib/events.js";
import { gateway } from "./api";

/** The most changes a page of GetActivity holds. */
const PAGE_SIZE = 200;

export interface RoundSeen {
  key: string;
  secretHex: string;
}

/** The table's whole log as the caller may see it, oldest first (GetActivity's pages). */
export async function readLog(tableId: string): Promise<ActivityItem[]> {
  const newestFirst: ActivityItem[] = [];
  let pageToken = "";
  do {
    const page = await gateway.getActivity({ tableId, pageSize: PAGE_SIZE, pageToken });
    newestFirst.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return newestFirst.reverse();
}

/** What ``seat`` (null: no seat) saw of each round in ``log`` (oldest first). */
export function witnessLog(log: readonly ActivityItem[], seat: number | null): DealWitness {
  const witness = new DealWitness(seat);
  for (const item of log) {
    if (item.event) witness.see({ event: toJson(EventEnvelopeSchema, item.event) });
  }
  return witness;
}

/** Every change of the table as ``seat`` (null: no seat) may see it, round by round. */
export async function witnessTable(tableId: string, seat: number | null): Promise<DealWitness> {
  return witnessLog(await readLog(tableId), seat);
}

export interface Verdict {
  ok: boolean;
  /** The operator lost the round's secret: the deal can never be checked (never a pass). */
  lost?: boolean;
  checks: { ok: boolean; text: string }[];
  /** The hands the secret deals, by seat (empty when the check could not run). */
  hands?: Map<number, string[]>;
}

/** What the check says of a round whose secret the operator lost. */
export const LOST =
  "The operator lost this round's secret (its dealer's database lost it), so this deal cannot be checked, ever. That is the operator's failure, not a pass.";

/** Re-create ``key``'s deal ("game/round") from its secret (or ``secretHex``, one given to you);
 * ``nameOf`` says another seat in words (its player's name). */
export async function checkRound(
  witness: DealWitness,
  key: string,
  nameOf: (seat: number) => string,
  secretHex?: string,
): Promise<Verdict> {
  const seen = witness.rounds.get(key);
  if (seen?.secretLost && !secretHex) {
    return { ok: false, lost: true, checks: [{ ok: false, text: LOST }] };
  }
  if (!seen || (!seen.secretHex && !seen.secretLost)) {
    return { ok: false, checks: [{ ok: false, text: "That round's secret has not been revealed yet: it comes at the round's end." }] };
  }
  return checkSeatDeal({ ...seen, seat: witness.seat, secretHex: secretHex || seen.secretHex, nameOf });
}
