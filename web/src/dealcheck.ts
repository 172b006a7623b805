// Check the deal, in the browser: read what this seat saw of the table from its start (its
// own Watch stream: the fingerprint and deal order before each deal, its hand as dealt,
// its exchange, the revealed secret), re-create a finished round with Web Crypto
// (public/lib: DEAL.md in JavaScript) and say in words what agreed and what did not.

import { toJson } from "@bufbuild/protobuf";
import { WatchResponseSchema } from "../gen/president/gateway/v1/gateway_pb";
import { checkSeatDeal } from "../public/lib/check.js";
import { DealWitness } from "../public/lib/events.js";
import { watchTable } from "./api";
import type { TableReceipts } from "./receipts";

export interface RoundSeen {
  key: string;
  secretHex: string;
}

/** Everything the viewer saw of the table up to now, round by round (rounds with a secret). */
export async function witnessTable(tableId: string, upTo: bigint, receipts: TableReceipts): Promise<DealWitness> {
  const abort = new AbortController();
  let witness: DealWitness | null = null;
  try {
    seen: for await (const changes of watchTable(tableId, 1n, abort.signal)) {
      for (const change of changes) {
        receipts.keep(change);
        witness ??= new DealWitness(change.view?.viewerSeat ?? null);
        witness.see(toJson(WatchResponseSchema, change));
        if (change.version >= upTo) break seen;
      }
    }
  } finally {
    abort.abort();
  }
  return witness ?? new DealWitness(null);
}

export interface Verdict {
  ok: boolean;
  checks: { ok: boolean; text: string }[];
}

/** Re-create ``key``'s deal ("game/round") from its secret (or ``secretHex``, one given to you). */
export async function checkRound(witness: DealWitness, key: string, secretHex?: string): Promise<Verdict> {
  const seen = witness.rounds.get(key);
  if (!seen || !seen.secretHex) {
    return { ok: false, checks: [{ ok: false, text: "That round's secret has not been revealed yet: it comes at the round's end." }] };
  }
  return checkSeatDeal({ ...seen, seat: witness.seat, secretHex: secretHex || seen.secretHex });
}
