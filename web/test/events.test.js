// The event reader against messages the Python protobuf runtime encoded
// (PRESIDENT_EVENT_CASES, written by tests/unit/web/test_js_deal.py).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { DealWitness, cardsGiven, dealCommitted, dealRevealed, dealSecretLost, fromBase64, roundStarted } from "../public/lib/events.js";

const READERS = { dealCommitted, roundStarted, cardsGiven, dealRevealed };
const casesFile = process.env.PRESIDENT_EVENT_CASES;

test("events encoded by Python decode to the same fields", { skip: !casesFile }, () => {
  const cases = JSON.parse(readFileSync(casesFile, "utf8"));
  assert.ok(cases.length > 0);
  for (const { reader, payload, expected } of cases) {
    assert.deepEqual(READERS[reader](fromBase64(payload)), expected, reader);
  }
});

test("a seat's witness gathers a round from its stream", { skip: !casesFile }, () => {
  const cases = JSON.parse(readFileSync(casesFile, "utf8"));
  const types = {
    dealCommitted: "DealCommitted",
    roundStarted: "RoundStarted",
    cardsGiven: "CardsGiven",
    dealRevealed: "DealRevealed",
  };
  const witness = new DealWitness(2);
  let key = null;
  for (const { reader, payload } of cases.slice(0, 4)) {
    key = witness.see({ event: { type: `president.events.v1.${types[reader]}`, payload } }) ?? key;
  }
  const round = witness.rounds.get(key);
  assert.equal(round.secretHex, cases[3].expected.secretHex);
  assert.deepEqual(round.dealOrder, cases[0].expected.dealOrder);
  assert.deepEqual(round.dealtHand, cases[1].expected.hands.find((h) => h.seat === 2).cards);
  assert.deepEqual(round.gifts, [cases[2].expected]);
});

test("a truncated message is refused", () => {
  assert.throws(() => dealCommitted(Uint8Array.of(0x1a, 0x05, 0x61)), RangeError);
});

const lostCase = process.env.PRESIDENT_LOST_CASE;

test("a round whose secret the operator lost is marked lost, never revealed", { skip: !lostCase }, () => {
  const { committed, lost, expected } = JSON.parse(lostCase);
  assert.deepEqual(dealSecretLost(fromBase64(lost)), expected);
  const witness = new DealWitness(0);
  witness.see({ event: { type: "president.events.v1.DealCommitted", payload: committed } });
  const key = witness.see({ event: { type: "president.events.v1.DealSecretLost", payload: lost } });
  assert.equal(key, "2/3");
  assert.equal(witness.rounds.get(key).secretLost, true);
  assert.equal(witness.rounds.get(key).secretHex, "");
});
