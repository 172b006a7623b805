// The committed seat draw of SEAT_DRAW.md (president-seatdraw-v1), byte for byte, with Web Crypto.
//
// Anyone holding a tournament round's revealed secret re-creates who sat at
// which table and seat: the fingerprint (SHA-256, binding the tournament and
// the round), the canonical encoding of the round's input, DEAL.md's random
// stream under the draw's own label, and the draw itself (random, rating
// bands or swiss). It runs the same in a browser and in Node 20+; no other
// dependency than deal.js beside it.
//
// A request: { tournamentId, round, method, tableSize,
//              entrants: [{ accountId, points, ratingMilli }], metBefore: [[a, b], ...] }.
// A seating: an array of tables, each an array of seats: an account id, or null for a bot.

import { RandomStream, StreamExhausted, shuffle } from "./deal.js";

export const SEATDRAW_VERSION = "president-seatdraw-v1";
export const SECRET_SIZE = 32;
export const METHODS = ["random", "rating_bands", "swiss"];
export const MIN_TABLE_SIZE = 2;
export const MAX_TABLE_SIZE = 52;
export const MAX_ROUND = 2 ** 32 - 1;
export const SEARCH_STEPS = 100000;

const encoder = new TextEncoder();
const FINGERPRINT_TAG = encoder.encode(`${SEATDRAW_VERSION}/fingerprint`);
const STREAM_TAG = encoder.encode(`${SEATDRAW_VERSION}/stream`);

/** A request no draw can be made of; ``reason`` is the same stable text as in Python. */
export class InvalidDrawRequest extends Error {
  constructor(reason, message) {
    super(message);
    this.name = "InvalidDrawRequest";
    this.reason = reason;
  }
}

function subtle() {
  const crypto = globalThis.crypto;
  if (!crypto || !crypto.subtle) {
    throw new Error("Web Crypto is not available here (a browser needs https or localhost)");
  }
  return crypto.subtle;
}

/** A fresh secret: 32 bytes from the platform's CSPRNG. */
export function newSecret() {
  return globalThis.crypto.getRandomValues(new Uint8Array(SECRET_SIZE));
}

/** The 32 bytes of a secret written in hex (64 digits). */
export function secretFromHex(hex) {
  if (typeof hex !== "string" || !/^[0-9a-fA-F]*$/.test(hex) || hex.length % 2 !== 0) {
    throw new SyntaxError("the secret is not hexadecimal");
  }
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return checkedSecret(bytes);
}

function checkedSecret(secret) {
  if (!(secret instanceof Uint8Array) || secret.length !== SECRET_SIZE) {
    throw new RangeError(`the draw's secret must be exactly ${SECRET_SIZE} bytes`);
  }
  return secret;
}

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function u32(value) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

function i64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt(value));
  return out;
}

function validText(value) {
  return typeof value === "string" && value.length > 0 && value.isWellFormed();
}

function text(value) {
  const bytes = encoder.encode(value);
  return concat([u32(bytes.length), bytes]);
}

function compareBytes(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

function checkedTournament(tournamentId, round) {
  if (!validText(tournamentId)) {
    throw new InvalidDrawRequest(
      "invalid_tournament_id",
      "A tournament id must be a non-empty, valid Unicode text.",
    );
  }
  if (!Number.isInteger(round) || round < 1 || round > MAX_ROUND) {
    throw new InvalidDrawRequest(
      "invalid_round",
      `A round number must be from 1 to ${MAX_ROUND}; got ${round}.`,
    );
  }
}

/**
 * lowercase hex(SHA-256("president-seatdraw-v1/fingerprint" || text(tournamentId) ||
 * uint32_be(round) || secret)): the round's commitment, binding tournament and round.
 */
export async function fingerprint(secret, tournamentId, round) {
  checkedSecret(secret);
  checkedTournament(tournamentId, round);
  const message = concat([FINGERPRINT_TAG, text(tournamentId), u32(round), secret]);
  return toHex(new Uint8Array(await subtle().digest("SHA-256", message)));
}

function checkedInteger(value, what, accountId) {
  if (!Number.isSafeInteger(value)) {
    throw new InvalidDrawRequest(
      "invalid_entrant",
      `${accountId}'s ${what} must be a whole number within ±(2^53 - 1); got ${value}.`,
    );
  }
}

/** The checked request: entrants by account id (UTF-8 bytes), the pairs among them, sorted. */
function canonical(request) {
  const { tournamentId, round, method, tableSize } = request;
  checkedTournament(tournamentId, round);
  if (!METHODS.includes(method)) {
    throw new InvalidDrawRequest(
      "unknown_method",
      `A draw's method is one of ${METHODS.join(", ")}; got ${JSON.stringify(method)}.`,
    );
  }
  if (!Number.isInteger(tableSize) || tableSize < MIN_TABLE_SIZE || tableSize > MAX_TABLE_SIZE) {
    throw new InvalidDrawRequest(
      "invalid_table_size",
      `A table seats ${MIN_TABLE_SIZE} to ${MAX_TABLE_SIZE} players; got ${tableSize}.`,
    );
  }
  const given = Array.from(request.entrants ?? []);
  if (given.length === 0) {
    throw new InvalidDrawRequest("no_entrants", "A draw needs at least one entrant.");
  }
  const seen = new Set();
  const entrants = given.map((entrant) => {
    const accountId = entrant?.accountId;
    if (!validText(accountId)) {
      throw new InvalidDrawRequest(
        "invalid_entrant",
        `An account id must be a non-empty, valid Unicode text; got ${JSON.stringify(accountId)}.`,
      );
    }
    checkedInteger(entrant.points, "points", accountId);
    checkedInteger(entrant.ratingMilli, "rating_milli", accountId);
    if (seen.has(accountId)) {
      throw new InvalidDrawRequest(
        "duplicate_entrant",
        `${accountId} is entered twice; an entrant draws one seat.`,
      );
    }
    seen.add(accountId);
    return {
      accountId,
      points: entrant.points,
      ratingMilli: entrant.ratingMilli,
      key: encoder.encode(accountId),
    };
  });
  entrants.sort((a, b) => compareBytes(a.key, b.key));
  const pairs = [];
  const pairKeys = new Set();
  for (const pair of request.metBefore ?? []) {
    const members = Array.from(new Set(pair));
    if (members.length !== 2 || !members.every(validText)) {
      throw new InvalidDrawRequest(
        "invalid_pair",
        `A pair who met must be two different account ids; got ${JSON.stringify([...pair])}.`,
      );
    }
    const [first, second] = members
      .map((id) => ({ id, key: encoder.encode(id) }))
      .sort((a, b) => compareBytes(a.key, b.key));
    const pairKey = JSON.stringify([first.id, second.id]);
    if (method === "swiss" && seen.has(first.id) && seen.has(second.id) && !pairKeys.has(pairKey)) {
      pairKeys.add(pairKey);
      pairs.push([first, second]);
    }
  }
  pairs.sort((p, q) => compareBytes(p[0].key, q[0].key) || compareBytes(p[1].key, q[1].key));
  return { request, entrants, pairs: pairs.map(([a, b]) => [a.id, b.id]) };
}

function encoding({ request, entrants, pairs }) {
  const parts = [
    text(SEATDRAW_VERSION),
    text(request.tournamentId),
    u32(request.round),
    text(request.method),
    u32(request.tableSize),
    u32(entrants.length),
  ];
  for (const entrant of entrants) {
    parts.push(text(entrant.accountId), i64(entrant.points), i64(entrant.ratingMilli));
  }
  parts.push(u32(pairs.length));
  for (const [first, second] of pairs) parts.push(text(first), text(second));
  return concat(parts);
}

/** The canonical encoding of SEAT_DRAW.md: the bytes the draw's stream is bound to. */
export function encodeRequest(request) {
  return encoding(canonical(request));
}

/** Lowercase hex SHA-256 of encodeRequest(request). */
export async function inputDigest(request) {
  return toHex(new Uint8Array(await subtle().digest("SHA-256", encodeRequest(request))));
}

/** Entrants per table: T = ceil(n / size) tables; table t seats floor(n / T), +1 if t < n mod T. */
export function tableCapacities(entrants, tableSize) {
  const tables = Math.ceil(entrants / tableSize);
  const base = Math.floor(entrants / tables);
  const extra = entrants % tables;
  return Array.from({ length: tables }, (_, t) => base + (t < extra ? 1 : 0));
}

function cut(capacities) {
  const groups = [];
  let start = 0;
  for (const capacity of capacities) {
    groups.push(Array.from({ length: capacity }, (_, i) => start + i));
    start += capacity;
  }
  return groups;
}

/** SEAT_DRAW.md's search: the first repeat-free tables in rank order, or null. */
function repeatFree(met, capacities) {
  const n = capacities.reduce((sum, c) => sum + c, 0);
  const tableOf = [];
  const firstSeat = [];
  capacities.forEach((capacity, table) => {
    firstSeat.push(tableOf.length);
    for (let i = 0; i < capacity; i += 1) tableOf.push(table);
  });
  const smallest = capacities[capacities.length - 1];
  const anchored = tableOf.map(
    (table, seat) => seat === firstSeat[table] && capacities[table] === smallest,
  );
  const chosen = new Array(n).fill(0);
  const used = new Array(n).fill(false);
  let lowest = 0; // the best unseated rank
  let steps = 0;
  let seat = 0;
  let candidate = 0;
  for (;;) {
    const start = firstSeat[tableOf[seat]];
    let placed = false;
    let c = candidate;
    while (c < n) {
      steps += 1;
      if (steps > SEARCH_STEPS) return null;
      if (!used[c]) {
        let clash = false;
        for (let other = start; other < seat; other += 1) {
          if (met[c].has(chosen[other])) {
            clash = true;
            break;
          }
        }
        if (!clash) {
          placed = true;
          break;
        }
      }
      c += 1;
    }
    if (placed) {
      chosen[seat] = c;
      used[c] = true;
      while (lowest < n && used[lowest]) lowest += 1;
      seat += 1;
      if (seat === n) {
        return capacities.map((capacity, t) => chosen.slice(firstSeat[t], firstSeat[t] + capacity));
      }
      candidate = seat === firstSeat[tableOf[seat]] ? lowest : c + 1;
      continue;
    }
    for (;;) {
      // back to the last seat with a choice left; an anchored seat has none
      seat -= 1;
      if (seat < 0) return null;
      used[chosen[seat]] = false;
      lowest = Math.min(lowest, chosen[seat]);
      if (!anchored[seat]) {
        candidate = chosen[seat] + 1;
        break;
      }
    }
  }
}

const byNumber = (a, b) => a - b;

/** SEAT_DRAW.md's fallback: each seat takes the best rank meeting fewest of its table. */
function fewestRepeats(met, capacities) {
  const n = capacities.reduce((sum, c) => sum + c, 0);
  const used = new Array(n).fill(false);
  return capacities.map((capacity) => {
    const group = [];
    for (let k = 0; k < capacity; k += 1) {
      let best = -1;
      let bestCount = 0;
      for (let c = 0; c < n; c += 1) {
        if (used[c]) continue;
        const count = group.filter((other) => met[c].has(other)).length;
        if (best < 0 || count < bestCount) {
          best = c;
          bestCount = count;
        }
        if (count === 0) break;
      }
      used[best] = true;
      group.push(best);
    }
    return group.sort(byNumber);
  });
}

/** SEAT_DRAW.md's repair: swap two players of two tables while that removes repeats. */
function swapRepeatsAway(met, groups) {
  const n = groups.reduce((sum, group) => sum + group.length, 0);
  const tableOf = new Array(n).fill(0);
  groups.forEach((group, t) => group.forEach((rank) => (tableOf[rank] = t)));
  const meetings = (player, group, leaving) =>
    group.filter((other) => other !== leaving && met[player].has(other)).length;
  const improvingSwap = () => {
    for (const [t, group] of groups.entries()) {
      for (const x of group) {
        const beforeX = meetings(x, group, x);
        if (beforeX === 0) continue;
        for (let distance = 1; distance < n; distance += 1) {
          for (const y of [x - distance, x + distance]) {
            if (y < 0 || y >= n || tableOf[y] === t) continue;
            const other = groups[tableOf[y]];
            const before = beforeX + meetings(y, other, y);
            const after = meetings(x, other, y) + meetings(y, group, x);
            if (after < before) return [x, y];
          }
        }
      }
    }
    return null;
  };
  for (let swap = improvingSwap(); swap !== null; swap = improvingSwap()) {
    const [x, y] = swap;
    const t = tableOf[x];
    const u = tableOf[y];
    groups[t] = groups[t].map((p) => (p === x ? y : p)).sort(byNumber);
    groups[u] = groups[u].map((p) => (p === y ? x : p)).sort(byNumber);
    tableOf[x] = u;
    tableOf[y] = t;
  }
  return groups;
}

function swiss(ranked, pairs, capacities) {
  const rankOf = new Map(ranked.map((entrant, rank) => [entrant.accountId, rank]));
  const met = ranked.map(() => new Set());
  for (const [first, second] of pairs) {
    const a = rankOf.get(first);
    const b = rankOf.get(second);
    met[a].add(b);
    met[b].add(a);
  }
  return repeatFree(met, capacities) ?? swapRepeatsAway(met, fewestRepeats(met, capacities));
}

// Array.prototype.sort is stable: equal values keep the shuffle's order.
const highestFirst = (a, b) => (a === b ? 0 : a > b ? -1 : 1);

function drawFrom(stream, { request, entrants, pairs }) {
  const shuffled = shuffle(entrants, stream);
  const capacities = tableCapacities(shuffled.length, request.tableSize);
  let ranked;
  let groups;
  if (request.method === "random") {
    ranked = shuffled;
    groups = cut(capacities);
  } else if (request.method === "rating_bands") {
    ranked = shuffled.slice().sort((a, b) => highestFirst(a.ratingMilli, b.ratingMilli));
    groups = cut(capacities);
  } else {
    ranked = shuffled.slice().sort((a, b) => highestFirst(a.points, b.points));
    groups = swiss(ranked, pairs, capacities);
  }
  return groups.map((group) => {
    const seats = shuffle(
      group.map((rank) => ranked[rank].accountId),
      stream,
    );
    while (seats.length < request.tableSize) seats.push(null);
    return seats;
  });
}

/**
 * The round's seating: tables in order, seats in order, null for a bot's seat.
 * Throws InvalidDrawRequest on a request no draw can be made of.
 */
export async function draw(secret, request) {
  checkedSecret(secret);
  const checked = canonical(request);
  const digest = new Uint8Array(await subtle().digest("SHA-256", encoding(checked)));
  const prefix = concat([STREAM_TAG, digest]);
  // Two shuffles of n draws each, plus rejections (rare): compute that many blocks
  // ahead, and twice as many again if the stream runs out (the draw is the same).
  let blocks = Math.ceil((2 * checked.entrants.length + 64) / 8);
  for (;;) {
    const stream = await RandomStream.open(secret, blocks, prefix);
    try {
      return drawFrom(stream, checked);
    } catch (error) {
      if (!(error instanceof StreamExhausted)) throw error;
      blocks *= 2;
    }
  }
}

function compare(drawn, seating) {
  const shape = Array.from(seating, (table) => table.length);
  if (shape.length !== drawn.length || shape.some((size, t) => size !== drawn[t].length)) {
    return {
      reason: "tables_shape",
      detail:
        `The seating has tables of [${shape.join(", ")}] seats; ` +
        `the draw has ${drawn.length} tables of ${drawn[0].length} seats.`,
    };
  }
  const drawnAt = new Map();
  drawn.forEach((table, t) =>
    table.forEach((player, s) => {
      if (player !== null) drawnAt.set(player, [t, s]);
    }),
  );
  const seen = new Set();
  for (const [t, table] of Array.from(seating).entries()) {
    for (const [s, player] of Array.from(table).entries()) {
      if (player === null || player === undefined) continue;
      const here = `Table ${t}, seat ${s} holds ${player}`;
      if (seen.has(player)) {
        return { reason: "player_moved", detail: `${here}, who is seated twice.` };
      }
      seen.add(player);
      if (!drawnAt.has(player)) {
        return { reason: "player_moved", detail: `${here}, whom the draw does not seat.` };
      }
      const [tableNo, seatNo] = drawnAt.get(player);
      if (tableNo !== t) {
        return {
          reason: "player_moved",
          detail: `${here}; the draw seats them at table ${tableNo}, seat ${seatNo}.`,
        };
      }
    }
  }
  for (const [player, [tableNo, seatNo]] of drawnAt) {
    if (!seen.has(player)) {
      return {
        reason: "player_moved",
        detail: `${player} has no seat; the draw seats them at table ${tableNo}, seat ${seatNo}.`,
      };
    }
  }
  for (const [t, table] of Array.from(seating).entries()) {
    for (const [s, player] of Array.from(table).entries()) {
      const drawnPlayer = drawn[t][s];
      if ((player ?? null) !== drawnPlayer) {
        return {
          reason: "seats_reordered",
          detail:
            `Table ${t}, seat ${s} holds ${player ?? "a bot"}; ` +
            `the draw seats ${drawnPlayer ?? "a bot"} there.`,
        };
      }
    }
  }
  return null;
}

/**
 * Whether ``seating`` is the draw of ``secret`` committed to by ``fingerprintHex``:
 * null when it is, else { reason, detail } with the reasons of the Python check_draw.
 */
export async function checkDraw(secret, fingerprintHex, request, seating) {
  try {
    checkedSecret(secret);
  } catch (error) {
    return { reason: "invalid_secret", detail: error.message };
  }
  let drawn;
  try {
    const expected = await fingerprint(secret, request.tournamentId, request.round);
    if (expected !== fingerprintHex) {
      return {
        reason: "fingerprint_mismatch",
        detail:
          "The secret does not have the committed fingerprint of " +
          `${request.tournamentId} round ${request.round}.`,
      };
    }
    drawn = await draw(secret, request);
  } catch (error) {
    if (error instanceof InvalidDrawRequest) {
      return { reason: "invalid_request", detail: error.message };
    }
    throw error;
  }
  return compare(drawn, seating);
}
