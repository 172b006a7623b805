// The seat's "Check the deal": fingerprint, the dealt hand and the exchange, against
// PRESIDENT_EXCHANGE_CASES (exchanges the Python rules made, some tampered).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { checkSeatDeal } from "../public/lib/check.js";
import { deal, secretFromHex } from "../public/lib/deal.js";
import { strongest } from "../public/lib/exchange.js";

const SECRET = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const FINGERPRINT = "d44b6082c4a07621beb646bc263416d507194c5cbe936ee6a514b85243cd9c07";

async function honestView() {
  const made = await deal(secretFromHex(SECRET), [0, 1, 2, 3]);
  const bottom = made.hands.get(3);
  const top = made.hands.get(0);
  const given = strongest(bottom, 2);
  return {
    secretHex: SECRET,
    fingerprint: FINGERPRINT,
    dealOrder: [0, 1, 2, 3],
    jokers: false,
    handSize: null,
    seat: 0,
    dealtHand: top,
    gifts: [
      { giver: 3, receiver: 0, cards: given, automatic: true },
      { giver: 0, receiver: 3, cards: [top[0], given[0]], automatic: false },
    ],
  };
}

test("strongest is the highest cards, jokers first", () => {
  assert.deepEqual(strongest(["3C", "2S", "RJ", "AH", "2D"], 3), ["RJ", "2S", "2D"]);
});

test("an honest round checks out, every check said in words", async () => {
  const result = await checkSeatDeal(await honestView());
  assert.equal(result.ok, true, JSON.stringify(result.checks));
  assert.equal(result.checks.length, 4);
  assert.match(result.checks[0].text, /fingerprint .* is the one shown before the deal/);
  assert.match(result.checks[2].text, /the strongest 2 of the hand seat 3 was dealt/);
  assert.doesNotMatch(result.checks[2].text, /seat 0/);
});

test("seats are said by name, and yours as you, never by number", async () => {
  const names = ["Ada", "Bob", "Cy", "Dee"];
  const result = await checkSeatDeal({ ...(await honestView()), nameOf: (seat) => names[seat] });
  assert.equal(result.ok, true, JSON.stringify(result.checks));
  assert.match(result.checks[2].text, /^Dee gave you .*: the strongest 2 of the hand Dee was dealt, as the rules say\.$/);
  assert.match(result.checks[3].text, /^You gave Dee .* in return: cards you held after the automatic gives\.$/);
  for (const check of result.checks) assert.doesNotMatch(check.text, /seat \d/i);
});

test("a spectator checks the fingerprint alone, and is told so", async () => {
  const view = { ...(await honestView()), seat: null, dealtHand: [], gifts: [] };
  const result = await checkSeatDeal(view);
  assert.equal(result.ok, true);
  assert.equal(result.checks.length, 2);
  assert.match(result.checks[1].text, /without a seat/);
  view.secretHex = "00".repeat(32);
  assert.equal((await checkSeatDeal(view)).ok, false);
});

test("a tampered secret fails the fingerprint and the hand", async () => {
  const view = await honestView();
  view.secretHex = `${SECRET.slice(0, -1)}e`;
  const result = await checkSeatDeal(view);
  assert.equal(result.ok, false);
  assert.equal(result.checks[0].ok, false);
  assert.equal(result.checks[1].ok, false);
});

test("an automatic give that is not the strongest fails", async () => {
  const view = await honestView();
  const bottom = (await deal(secretFromHex(SECRET), [0, 1, 2, 3])).hands.get(3);
  const weakest = bottom.filter((card) => !view.gifts[0].cards.includes(card))[0];
  view.gifts[0].cards = [view.gifts[0].cards[0], weakest];
  const result = await checkSeatDeal(view);
  assert.equal(result.ok, false);
  assert.match(result.checks[2].text, /but the strongest 2/);
});

const casesFile = process.env.PRESIDENT_EXCHANGE_CASES;
test("exchanges the Python rules made get the verdict they must", { skip: !casesFile }, async () => {
  const cases = JSON.parse(readFileSync(casesFile, "utf8"));
  assert.ok(cases.length > 0);
  for (const item of cases) {
    const result = await checkSeatDeal({
      secretHex: item.secret,
      fingerprint: item.fingerprint,
      dealOrder: item.order,
      jokers: false,
      handSize: null,
      seat: item.seat,
      dealtHand: item.dealtHand,
      gifts: item.gifts,
    });
    assert.equal(result.ok, item.ok, `${item.secret}: ${JSON.stringify(result.checks)}`);
  }
});
