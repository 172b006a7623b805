// SEAT_DRAW.md in JavaScript against the pinned vectors (web/test/seatdraw_vectors.json,
// written by python -m tests.support.seatdraw_vectors), and against the Python
// implementation on the random requests of PRESIDENT_SEATDRAW_CASES (a JSON file that
// tests/unit/tournament/test_seat_draw.py writes with president.tournament.draw).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  InvalidDrawRequest,
  checkDraw,
  draw,
  encodeRequest,
  fingerprint,
  inputDigest,
  newSecret,
  secretFromHex,
  tableCapacities,
} from "../public/lib/seatdraw.js";

const vectorsFile = new URL("./seatdraw_vectors.json", import.meta.url);
const pinned = JSON.parse(readFileSync(vectorsFile, "utf8"));

test("the vectors are SEAT_DRAW.md's version and cover each method", () => {
  assert.equal(pinned.version, "president-seatdraw-v1");
  const methods = new Set(pinned.vectors.map((v) => v.request.method));
  assert.deepEqual([...methods].sort(), ["random", "rating_bands", "swiss"]);
});

for (const vector of pinned.vectors) {
  test(`pinned vector ${vector.name}`, async () => {
    const secret = secretFromHex(vector.secret);
    const { request } = vector;
    const committed = await fingerprint(secret, request.tournamentId, request.round);
    assert.equal(committed, vector.fingerprint);
    assert.equal(await inputDigest(request), vector.inputDigest);
    const seating = await draw(secret, request);
    assert.deepEqual(seating, vector.seating);
    assert.equal(await checkDraw(secret, vector.fingerprint, request, seating), null);
    for (const tamper of vector.tampers) {
      const key = secretFromHex(tamper.secret ?? vector.secret);
      const problem = await checkDraw(key, vector.fingerprint, request, tamper.seating);
      assert.equal(problem?.reason, tamper.reason, JSON.stringify(problem));
    }
  });
}

test("the entrants' order does not matter, and bots sit last at the last tables", async () => {
  const vector = pinned.vectors.find((v) => v.name === "random-10x4-uneven");
  const secret = secretFromHex(vector.secret);
  const reversed = { ...vector.request, entrants: vector.request.entrants.slice().reverse() };
  assert.deepEqual(encodeRequest(reversed), encodeRequest(vector.request));
  assert.deepEqual(await draw(secret, reversed), vector.seating);
  assert.deepEqual(tableCapacities(1001, 4).slice(-4), [4, 3, 3, 3]);
  assert.deepEqual(tableCapacities(5, 4), [3, 2]);
});

test("bad requests are refused with Python's reasons", async () => {
  const good = {
    tournamentId: "t",
    round: 1,
    method: "random",
    tableSize: 4,
    entrants: [{ accountId: "a", points: 0, ratingMilli: 0 }],
    metBefore: [],
  };
  const cases = [
    [{ tournamentId: "" }, "invalid_tournament_id"],
    [{ tournamentId: "\ud800" }, "invalid_tournament_id"],
    [{ round: 0 }, "invalid_round"],
    [{ method: "dutch" }, "unknown_method"],
    [{ tableSize: 53 }, "invalid_table_size"],
    [{ entrants: [] }, "no_entrants"],
    [{ entrants: [{ accountId: "a", points: 2 ** 53, ratingMilli: 0 }] }, "invalid_entrant"],
    [{ entrants: [{ accountId: "a", points: 0, ratingMilli: 1.5 }] }, "invalid_entrant"],
    [{ entrants: [good.entrants[0], good.entrants[0]] }, "duplicate_entrant"],
    [{ metBefore: [["a", "a"]] }, "invalid_pair"],
  ];
  const secret = newSecret();
  for (const [change, reason] of cases) {
    await assert.rejects(draw(secret, { ...good, ...change }), (error) => {
      assert.ok(error instanceof InvalidDrawRequest);
      assert.equal(error.reason, reason);
      return true;
    });
  }
  assert.equal((await checkDraw(secret.slice(1), "00", good, [])).reason, "invalid_secret");
});

const casesFile = process.env.PRESIDENT_SEATDRAW_CASES;
test("random draws agree with the Python implementation", { skip: !casesFile }, async () => {
  const cases = JSON.parse(readFileSync(casesFile, "utf8"));
  assert.ok(cases.length > 0);
  for (const item of cases) {
    const secret = secretFromHex(item.secret);
    const { request } = item;
    assert.equal(await fingerprint(secret, request.tournamentId, request.round), item.fingerprint);
    assert.equal(await inputDigest(request), item.inputDigest, item.secret);
    assert.deepEqual(await draw(secret, request), item.seating, item.secret);
  }
});
