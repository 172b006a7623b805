// Cards as the table shows them: names, suits, and the current order (revolution reverses it).

import { cardIndex, RANKS } from "../public/lib/deal.js";

const SUIT_SYMBOLS: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_WORDS: Record<string, string> = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_WORDS: Record<string, string> = { J: "jack", Q: "queen", K: "king", A: "ace" };

/** "10H" -> "10"; jokers have the rank "joker". */
export function rankOf(card: string): string {
  return card === "BJ" || card === "RJ" ? "joker" : card.slice(0, -1);
}

/** What the card shows: "10♥", "🃏". */
export function face(card: string): string {
  if (card === "BJ" || card === "RJ") return card === "BJ" ? "🃏 black" : "🃏 red";
  return rankOf(card) + SUIT_SYMBOLS[card.slice(-1)];
}

/** What a screen reader says: "10 of hearts". */
export function spoken(card: string): string {
  if (card === "BJ") return "black joker";
  if (card === "RJ") return "red joker";
  const rank = rankOf(card);
  return `${RANK_WORDS[rank] ?? rank} of ${SUIT_WORDS[card.slice(-1)]}`;
}

/** A card's code in a sentence ("2D", "10H", "RJ"), as the server and DEAL.md write them. */
const CARD_IN_TEXT = /\b(?:10|[2-9JQKA])[CDHS]\b|\b[BR]J\b/g;

/** A sentence cut at its cards' codes: its words (strings) and its cards ({ card }), in order. */
export function cardsInText(text: string): (string | { card: string })[] {
  const parts: (string | { card: string })[] = [];
  let from = 0;
  for (const match of text.matchAll(CARD_IN_TEXT)) {
    if (match.index > from) parts.push(text.slice(from, match.index));
    parts.push({ card: match[0] });
    from = match.index + match[0].length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** A sentence as a screen reader should say it: "Seat 3 gave you 2 of diamonds". */
export function spokenText(text: string): string {
  return cardsInText(text)
    .map((part) => (typeof part === "string" ? part : spoken(part.card)))
    .join("");
}

export function isRed(card: string): boolean {
  return card.endsWith("H") || card.endsWith("D") || card === "RJ";
}

/** The hand weakest first in the current order (a revolution turns the ranks around). */
export function sortedHand(cards: readonly string[], revolution: boolean): string[] {
  const strength = (card: string): number => {
    const index = cardIndex(card);
    if (index >= 52) return 1000 + index; // jokers stay on top
    const rank = index >> 2;
    return (revolution ? RANKS.length - 1 - rank : rank) * 4 + (index & 3);
  };
  return [...cards].sort((a, b) => strength(a) - strength(b));
}
