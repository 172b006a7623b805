// The exchange as one seat saw it, checked against the hands re-created from the secret.
//
// A seat sees the gifts it gave and received, with their cards. The automatic
// gives must be the giver's strongest cards of the hand it was dealt (in the
// normal order: the highest card indexes, jokers first, ties by suit S H D C);
// a free return must come from the returner's hand after the automatic gives.

import { cardIndex, cardName } from "./deal.js";

/** The ``count`` strongest cards of ``cards`` (texts), strongest first. */
export function strongest(cards, count) {
  return cards
    .map(cardIndex)
    .sort((a, b) => b - a)
    .slice(0, count)
    .map(cardName);
}

function sameCards(a, b) {
  const x = a.map(cardIndex).sort((p, q) => p - q);
  const y = b.map(cardIndex).sort((p, q) => p - q);
  return x.length === y.length && x.every((card, i) => card === y[i]);
}

function missing(cards, hand) {
  const held = new Set(hand.map(cardIndex));
  return cards.filter((card) => !held.has(cardIndex(card)));
}

/** A seat's hand after the automatic gives: dealt, less what it gave, plus what it got. */
function afterAutomatic(seat, dealtHand, gifts) {
  const gone = new Set(
    gifts.filter((g) => g.automatic && g.giver === seat).flatMap((g) => g.cards.map(cardIndex)),
  );
  const got = gifts.filter((g) => g.automatic && g.receiver === seat).flatMap((g) => g.cards);
  return [...dealtHand.filter((card) => !gone.has(cardIndex(card))), ...got];
}

/** "seat 3": how a seat is said when the page gives no name. */
export function seatWords(seat) {
  return `seat ${seat}`;
}

/**
 * Check the gifts ``seat`` took part in against ``hands`` (seat -> card texts re-created
 * from the secret). ``gifts``: [{giver, receiver, cards, automatic}] as the seat saw them.
 * ``nameOf(seat)`` says another seat in words (its player's name). Returns a list of
 * { ok, text } in words, one per gift, "you" for ``seat`` itself.
 */
export function checkExchange(seat, hands, gifts, nameOf = seatWords) {
  const mine = gifts.filter((g) => g.giver === seat || g.receiver === seat);
  const out = [];
  const name = (s) => (s === seat ? "you" : nameOf(s));
  const dealt = (s) => (s === seat ? "you were dealt" : `${nameOf(s)} was dealt`);
  const heldBy = (s) => (s === seat ? "you held" : `${nameOf(s)} held`);
  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
  for (const gift of mine) {
    const giverHand = hands.get(gift.giver) ?? [];
    const who = gift.giver === seat ? `You gave ${name(gift.receiver)}` : `${capital(name(gift.giver))} gave you`;
    const cards = gift.cards.join(" ") || "nothing";
    if (gift.automatic) {
      const expected = strongest(giverHand, gift.cards.length);
      const ok = sameCards(gift.cards, expected);
      out.push({
        ok,
        text: ok
          ? `${who} ${cards}: the strongest ${gift.cards.length} of the hand ${dealt(gift.giver)}, as the rules say.`
          : `${who} ${cards}, but the strongest ${gift.cards.length} of the hand ${dealt(gift.giver)} are ${expected.join(" ")}.`,
      });
    } else {
      const held = afterAutomatic(gift.giver, giverHand, gifts);
      const absent = missing(gift.cards, held);
      const ok = absent.length === 0;
      out.push({
        ok,
        text: ok
          ? `${who} ${cards} in return: cards ${heldBy(gift.giver)} after the automatic gives.`
          : `${who} ${cards} in return, but ${name(gift.giver)} did not hold ${absent.join(" ")} after the automatic gives.`,
      });
    }
  }
  return out;
}
