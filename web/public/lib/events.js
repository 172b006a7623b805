// The few table events "Check the deal" reads, decoded from their protobuf bytes.
//
// A seat's Watch stream carries each event as an EventEnvelope whose payload is
// the event message's protobuf encoding (events.proto). The check needs four:
// DealCommitted (the fingerprint and deal order, before the deal), RoundStarted
// (the seat's own hand as dealt), CardsGiven (the exchange) and DealRevealed (the
// secret), or DealSecretLost (the operator lost the secret: no check is possible). This reads the protobuf wire format for those fields only; the web
// table will decode every event with code generated from the protos.

const TEXT = new TextDecoder();

function* fields(bytes) {
  let offset = 0;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (offset >= bytes.length) throw new RangeError("a truncated protobuf message");
      const byte = bytes[offset];
      offset += 1;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  while (offset < bytes.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    const type = key % 8;
    if (type === 0) {
      yield [number, varint()];
    } else if (type === 2) {
      const length = varint();
      if (offset + length > bytes.length) throw new RangeError("a truncated protobuf message");
      yield [number, bytes.subarray(offset, offset + length)];
      offset += length;
    } else if (type === 1) {
      offset += 8;
    } else if (type === 5) {
      offset += 4;
    } else {
      throw new RangeError(`protobuf wire type ${type} is not supported here`);
    }
  }
}

function unpackVarints(bytes) {
  const out = [];
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      out.push(value);
      value = 0;
      scale = 1;
    } else {
      scale *= 128;
    }
  }
  return out;
}

/** The bytes of a base64 text (protobuf JSON writes bytes so). */
export function fromBase64(text) {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export function dealCommitted(bytes) {
  const out = { gameNo: 0, roundNo: 0, fingerprint: "", dealOrder: [], jokers: false, handSize: 0 };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.gameNo = value;
    else if (number === 2) out.roundNo = value;
    else if (number === 3) out.fingerprint = TEXT.decode(value);
    else if (number === 5) out.dealOrder.push(...(typeof value === "number" ? [value] : unpackVarints(value)));
    else if (number === 8) out.jokers = value !== 0;
    else if (number === 9) out.handSize = value;
  }
  return out;
}

function hand(bytes) {
  const out = { seat: 0, cards: [] };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.seat = value;
    else if (number === 2) out.cards.push(TEXT.decode(value));
  }
  return out;
}

export function roundStarted(bytes) {
  const out = { roundNo: 0, hands: [] };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.roundNo = value;
    else if (number === 5) out.hands.push(hand(value));
  }
  return out;
}

export function cardsGiven(bytes) {
  const out = { giver: 0, receiver: 0, cards: [], automatic: false };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.giver = value;
    else if (number === 2) out.receiver = value;
    else if (number === 3) out.cards.push(TEXT.decode(value));
    else if (number === 4) out.automatic = value !== 0;
  }
  return out;
}

export function dealRevealed(bytes) {
  const out = { gameNo: 0, roundNo: 0, secretHex: "" };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.gameNo = value;
    else if (number === 2) out.roundNo = value;
    else if (number === 3) out.secretHex = TEXT.decode(value);
  }
  return out;
}

export function dealSecretLost(bytes) {
  const out = { gameNo: 0, roundNo: 0, fingerprint: "" };
  for (const [number, value] of fields(bytes)) {
    if (number === 1) out.gameNo = value;
    else if (number === 2) out.roundNo = value;
    else if (number === 3) out.fingerprint = TEXT.decode(value);
  }
  return out;
}

const READERS = {
  "president.events.v1.DealCommitted": dealCommitted,
  "president.events.v1.RoundStarted": roundStarted,
  "president.events.v1.CardsGiven": cardsGiven,
  "president.events.v1.DealRevealed": dealRevealed,
  "president.events.v1.DealSecretLost": dealSecretLost,
};

/**
 * Follows a seat's changes (Watch responses as protobuf JSON) and gathers, round by
 * round, what the seat saw: { [`${game}/${round}`]: { fingerprint, dealOrder, jokers,
 * handSize, dealtHand, gifts, secretHex, secretLost } }.
 */
export class DealWitness {
  constructor(seat) {
    this.seat = seat;
    this.rounds = new Map();
    this.current = null;
  }

  /** One change of the seat's stream; returns the round's key when its secret arrives. */
  see(change) {
    const event = change.event;
    const read = event && READERS[event.type];
    if (!read) return null;
    const message = read(fromBase64(event.payload ?? ""));
    if (event.type.endsWith("DealCommitted")) {
      this.current = {
        key: `${message.gameNo || 1}/${message.roundNo}`,
        fingerprint: message.fingerprint,
        dealOrder: message.dealOrder,
        jokers: message.jokers,
        handSize: message.handSize || null,
        dealtHand: [],
        gifts: [],
        secretHex: "",
        secretLost: false,
      };
      this.rounds.set(this.current.key, this.current);
    } else if (this.current && event.type.endsWith("RoundStarted")) {
      this.current.dealtHand = message.hands.find((h) => h.seat === this.seat)?.cards ?? [];
    } else if (this.current && event.type.endsWith("CardsGiven")) {
      this.current.gifts.push(message);
    } else if (event.type.endsWith("DealRevealed")) {
      const key = `${message.gameNo || 1}/${message.roundNo}`;
      const round = this.rounds.get(key);
      if (round) round.secretHex = message.secretHex;
      return round ? key : null;
    } else if (event.type.endsWith("DealSecretLost")) {
      // The operator's dealer lost this round's secret: it can never be checked.
      const key = `${message.gameNo || 1}/${message.roundNo}`;
      const round = this.rounds.get(key);
      if (round) round.secretLost = true;
      return round ? key : null;
    }
    return null;
  }
}
