// DEAL.md in JavaScript against the project's pinned vectors, and against the Python
// implementation on the random deals of PRESIDENT_DEAL_CASES (a JSON file that
// tests/unit/web/test_js_deal.py writes with president.deal).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  RandomStream,
  cardIndex,
  cardName,
  cutMiddle,
  cutThirds,
  deal,
  fingerprint,
  freshDeck,
  secretFromHex,
  shuffle,
  shuffledDeck,
} from "../public/lib/deal.js";

const pinned = JSON.parse(readFileSync(new URL("./vectors.json", import.meta.url), "utf8"));

test("the fresh deck is DEAL.md's order, and card texts round-trip", () => {
  const names = freshDeck(true).map(cardName);
  assert.equal(names.slice(0, 5).join(" "), "3C 3D 3H 3S 4C");
  assert.equal(names.slice(48).join(" "), "2C 2D 2H 2S BJ RJ");
  for (const [index, name] of names.entries()) assert.equal(cardIndex(name), index);
  assert.throws(() => cardIndex("1X"), SyntaxError);
});

for (const vector of pinned.vectors) {
  test(`pinned vector ${vector.name}`, async () => {
    const secret = secretFromHex(vector.secret);
    assert.equal(await fingerprint(secret), vector.fingerprint);
    const made = await deal(secret, vector.order, {
      jokers: vector.jokers,
      handSize: vector.handSize,
    });
    assert.equal(made.fingerprint, vector.fingerprint);
    // The vectors list hands by seat 0, 1, ...
    vector.hands.forEach((hand, seat) => assert.deepEqual(made.hands.get(seat), hand));
    assert.deepEqual(made.setAside, vector.setAside);
  });
}

test("the DEAL.md vector's stream, uniform draws and steps", async () => {
  const secret = secretFromHex(pinned.stepSecret);
  const words = await RandomStream.open(secret, 3);
  assert.deepEqual(pinned.words.map(() => words.nextU32()), pinned.words);

  const draws = await RandomStream.open(secret, 3);
  for (const [n, value, wordsRead] of pinned.uniform) {
    assert.equal(draws.uniform(n), value, `uniform(${n})`);
    assert.equal(draws.wordsRead, wordsRead);
  }

  const stream = await RandomStream.open(secret, 64);
  const steps = { shuffle, cut_middle: cutMiddle, cut_thirds: cutThirds };
  let deck = freshDeck(false);
  for (const { step, deck: after, wordsRead } of pinned.steps) {
    deck = steps[step](deck, stream);
    assert.deepEqual(deck.map(cardName), after, step);
    assert.equal(stream.wordsRead, wordsRead, step);
  }
  assert.deepEqual(await shuffledDeck(secret), deck);
});

test("a secret that is not 32 bytes of hex is refused", () => {
  assert.throws(() => secretFromHex("00"), RangeError);
  assert.throws(() => secretFromHex("zz".repeat(32)), SyntaxError);
});

const casesFile = process.env.PRESIDENT_DEAL_CASES;
test("random deals agree with the Python implementation", { skip: !casesFile }, async () => {
  const cases = JSON.parse(readFileSync(casesFile, "utf8"));
  assert.ok(cases.length > 0);
  for (const item of cases) {
    const made = await deal(secretFromHex(item.secret), item.order, {
      jokers: item.jokers,
      handSize: item.handSize,
    });
    assert.equal(made.fingerprint, item.fingerprint);
    for (const [seat, hand] of Object.entries(item.hands)) {
      assert.deepEqual(made.hands.get(Number(seat)), hand, `seat ${seat} of ${item.secret}`);
    }
    assert.deepEqual(made.setAside, item.setAside);
  }
});
