// The committed deal of DEAL.md (president-deal-v1), byte for byte, with Web Crypto.
//
// Anyone holding a round's revealed secret re-creates its deal: the
// fingerprint (SHA-256), the random stream (HMAC-SHA256 blocks read as
// big-endian uint32), the shuffle, cut, shuffle, cut, shuffle, and the deal
// to the seats of the deal order. It runs the same in a browser and in
// Node 20+ (globalThis.crypto.subtle); no other dependency.
//
// Cards are texts ("3C", "10H", "BJ"); index = rank * 4 + suit in the fresh
// deck's order, then BJ = 52, RJ = 53.

export const DEAL_VERSION = "president-deal-v1";
export const SECRET_SIZE = 32;
export const RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"];
export const SUITS = ["C", "D", "H", "S"];
const TWO_32 = 2 ** 32;
const TAG = new TextEncoder().encode(DEAL_VERSION);
const STREAM_TAG = new TextEncoder().encode(`${DEAL_VERSION}/stream`);

/** The text of a card index: 0 -> "3C", 51 -> "2S", 52 -> "BJ", 53 -> "RJ". */
export function cardName(index) {
  if (index === 52) return "BJ";
  if (index === 53) return "RJ";
  if (!Number.isInteger(index) || index < 0 || index > 51) {
    throw new RangeError(`no card has index ${index}`);
  }
  return RANKS[index >> 2] + SUITS[index & 3];
}

/** The index of a card text, case-insensitive. */
export function cardIndex(text) {
  const name = String(text).trim().toUpperCase();
  if (name === "BJ") return 52;
  if (name === "RJ") return 53;
  const rank = RANKS.indexOf(name.slice(0, -1));
  const suit = SUITS.indexOf(name.slice(-1));
  if (rank < 0 || suit < 0) {
    throw new SyntaxError(`${JSON.stringify(text)} is not a card: write the rank then the suit, as 10H`);
  }
  return rank * 4 + suit;
}

/** The fresh deck of DEAL.md as card indexes: 3C 3D 3H 3S 4C ... 2S, then BJ RJ with jokers. */
export function freshDeck(jokers = false) {
  return Array.from({ length: jokers ? 54 : 52 }, (_, i) => i);
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
    throw new RangeError(`the deal's secret must be exactly ${SECRET_SIZE} bytes`);
  }
  return secret;
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function subtle() {
  const crypto = globalThis.crypto;
  if (!crypto || !crypto.subtle) {
    throw new Error("Web Crypto is not available here (a browser needs https or localhost)");
  }
  return crypto.subtle;
}

/** lowercase hex(SHA-256("president-deal-v1" || secret)). */
export async function fingerprint(secret) {
  const digest = await subtle().digest("SHA-256", concat(TAG, checkedSecret(secret)));
  return hex(new Uint8Array(digest));
}

/** Thrown when a stream is read past the blocks computed ahead. */
export class StreamExhausted extends RangeError {}

/**
 * The deal's random stream: block k = HMAC-SHA256(secret, "president-deal-v1/stream" ||
 * uint64_be(k)), read 4 bytes at a time as big-endian uint32. Blocks are computed ahead
 * in batches (Web Crypto is asynchronous); the draws themselves are synchronous.
 * ``prefix`` replaces "president-deal-v1/stream" for another committed draw that
 * reuses the construction under a label of its own (the seat draw of SEAT_DRAW.md).
 */
export class RandomStream {
  static async open(secret, blocks = 64, prefix = STREAM_TAG) {
    const key = await subtle().importKey(
      "raw",
      checkedSecret(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const stream = new RandomStream(key, prefix);
    await stream.extend(blocks);
    return stream;
  }

  constructor(key, prefix = STREAM_TAG) {
    this.key = key;
    this.prefix = prefix;
    this.words = [];
    this.position = 0;
    this.nextBlock = 0;
  }

  /** Computes ``count`` more blocks of the stream. */
  async extend(count) {
    const pending = [];
    for (let i = 0; i < count; i += 1) {
      const index = new Uint8Array(8);
      new DataView(index.buffer).setBigUint64(0, BigInt(this.nextBlock + i));
      pending.push(subtle().sign("HMAC", this.key, concat(this.prefix, index)));
    }
    for (const block of await Promise.all(pending)) {
      const view = new DataView(block);
      for (let offset = 0; offset < 32; offset += 4) this.words.push(view.getUint32(offset));
    }
    this.nextBlock += count;
  }

  /** How many uint32 values were drawn so far, rejected draws included. */
  get wordsRead() {
    return this.position;
  }

  nextU32() {
    if (this.position >= this.words.length) {
      throw new StreamExhausted("the stream ran past the blocks computed ahead: extend() it first");
    }
    const word = this.words[this.position];
    this.position += 1;
    return word;
  }

  /** uniform(n) for 1 <= n <= 2^32: draw u until u < 2^32 - (2^32 mod n); return u mod n. */
  uniform(n) {
    if (!Number.isInteger(n) || n < 1 || n > TWO_32) {
      throw new RangeError(`uniform(n) needs a whole number n from 1 to 2^32; got ${n}`);
    }
    const limit = TWO_32 - (TWO_32 % n);
    for (;;) {
      const u = this.nextU32();
      if (u < limit) return u % n;
    }
  }
}

/** Fisher–Yates: for i from len-1 down to 1, swap positions i and uniform(i + 1). */
export function shuffle(deck, stream) {
  const cards = deck.slice();
  for (let i = cards.length - 1; i >= 1; i -= 1) {
    const j = stream.uniform(i + 1);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

/** c = len//2 - 4 + uniform(9); deck[c:] + deck[:c]. */
export function cutMiddle(deck, stream) {
  const c = Math.floor(deck.length / 2) - 4 + stream.uniform(9);
  return [...deck.slice(c), ...deck.slice(0, c)];
}

/** t = len//3; a, b = t - 3 + uniform(7) each; P1+P2+P0 when uniform(2) = 0, else P2+P0+P1. */
export function cutThirds(deck, stream) {
  const t = Math.floor(deck.length / 3);
  const a = t - 3 + stream.uniform(7);
  const b = t - 3 + stream.uniform(7);
  const p0 = deck.slice(0, a);
  const p1 = deck.slice(a, a + b);
  const p2 = deck.slice(a + b);
  return stream.uniform(2) === 0 ? [...p1, ...p2, ...p0] : [...p2, ...p0, ...p1];
}

// Three shuffles of at most 53 draws each and the cuts, plus rejections: 64 blocks
// (512 words) is far more than a deal ever draws; the stream says so if not.
const BLOCKS_AHEAD = 64;

/** The fresh deck after shuffle, cut_middle, shuffle, cut_thirds, shuffle, from one stream. */
export async function shuffledDeck(secret, jokers = false) {
  const stream = await RandomStream.open(secret, BLOCKS_AHEAD);
  let deck = shuffle(freshDeck(jokers), stream);
  deck = cutMiddle(deck, stream);
  deck = shuffle(deck, stream);
  deck = cutThirds(deck, stream);
  return shuffle(deck, stream);
}

function checkedOrder(order, deckSize) {
  const seats = Array.from(order);
  if (seats.length < 2 || seats.length > deckSize) {
    throw new RangeError(`a deal needs 2 to ${deckSize} players; got ${seats.length}`);
  }
  if (new Set(seats).size !== seats.length || seats.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new RangeError(`the deal order must name each seat once; got [${seats}]`);
  }
  return seats;
}

/**
 * Deal one round from ``secret`` to the seats of ``dealOrder`` (first to receive first):
 * cards go one at a time from deck position 0 to the seats in that order, round and round,
 * until the deck is empty or, with ``handSize``, every seat holds that many.
 * Returns { fingerprint, hands: Map(seat -> card texts in dealt order), setAside }.
 */
export async function deal(secret, dealOrder, { jokers = false, handSize = null } = {}) {
  const deckSize = jokers ? 54 : 52;
  const order = checkedOrder(dealOrder, deckSize);
  let dealt = deckSize;
  if (handSize !== null && handSize !== undefined && handSize !== 0) {
    if (!Number.isInteger(handSize) || handSize < 1 || handSize * order.length > deckSize) {
      throw new RangeError(`a hand size of ${handSize} does not fit ${order.length} players`);
    }
    dealt = handSize * order.length;
  }
  const deck = await shuffledDeck(secret, jokers);
  const hands = new Map(order.map((seat) => [seat, []]));
  for (let position = 0; position < dealt; position += 1) {
    hands.get(order[position % order.length]).push(cardName(deck[position]));
  }
  return {
    fingerprint: await fingerprint(secret),
    hands,
    setAside: deck.slice(dealt).map(cardName),
  };
}
