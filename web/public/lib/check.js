// "Check the deal" for one seat: re-create the round from its revealed secret and compare
// with what the seat saw: the fingerprint shown before the deal, the hand it was dealt,
// and the exchange it took part in. Every check is said in words.

import { deal, secretFromHex } from "./deal.js";
import { checkExchange } from "./exchange.js";

function sameSet(a, b) {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((card, i) => card === y[i]);
}

/**
 * ``seen``: { secretHex, fingerprint, dealOrder, jokers, handSize, seat, dealtHand, gifts,
 * nameOf } (``nameOf(seat)``: another seat's player in words; "seat 3" when not given)
 * as the seat saw them (``seat`` null for a spectator: the fingerprint alone is checked) (the fingerprint and deal order before the deal, its own hand as
 * dealt, the gifts it gave and received, the secret at the reveal).
 * Returns { ok, checks: [{ ok, text }], hands } with the re-created hands by seat.
 */
export async function checkSeatDeal(seen) {
  const checks = [];
  let secret;
  try {
    secret = secretFromHex(seen.secretHex);
  } catch (error) {
    return { ok: false, checks: [{ ok: false, text: `The revealed secret is not usable: ${error.message}.` }], hands: new Map() };
  }
  const made = await deal(secret, seen.dealOrder, { jokers: seen.jokers, handSize: seen.handSize });
  const printOk = made.fingerprint === seen.fingerprint;
  checks.push({
    ok: printOk,
    text: printOk
      ? `The secret's fingerprint ${made.fingerprint.slice(0, 16)}… is the one shown before the deal.`
      : `The secret's fingerprint ${made.fingerprint.slice(0, 16)}… is not the one shown before the deal (${String(seen.fingerprint).slice(0, 16)}…).`,
  });
  if (seen.seat === null || seen.seat === undefined) {
    checks.push({
      ok: true,
      text: "You watched without a seat: you saw no hand and no exchange, so only the fingerprint is checked.",
    });
    return { ok: checks.every((c) => c.ok), checks, hands: made.hands };
  }
  const mine = made.hands.get(seen.seat) ?? [];
  const handOk = sameSet(mine, seen.dealtHand);
  checks.push({
    ok: handOk,
    text: handOk
      ? `The ${mine.length} cards the secret deals to your seat are the ones you were dealt.`
      : `The secret deals your seat ${mine.join(" ")}, but you were dealt ${seen.dealtHand.join(" ")}.`,
  });
  checks.push(...checkExchange(seen.seat, made.hands, seen.gifts ?? [], seen.nameOf));
  return { ok: checks.every((c) => c.ok), checks, hands: made.hands };
}
