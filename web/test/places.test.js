// Places and roles in words (web/src/places.ts, run by Node as TypeScript): one spelling of
// every rulebook's titles, and why a seat that went out first sits at the bottom.

import { test } from "node:test";
import assert from "node:assert/strict";

import { ordinal, outText, roleTitle } from "../src/places.ts";

// The titles as president.rules.roles writes them, each preset its rulebook's spelling.
const TITLES = {
  house: ["President", "Vice-president", "Neutral", "Vice-asshole", "Asshole"],
  club: ["President", "Vice President", "Citizen", "Vice Peasant", "Peasant"],
  classic: ["President", "Vice-President", "Citizen", "Vice-Scum", "Scum"],
  traditional: ["President", "Vice-President", "Neutral", "Vice-Asshole", "Asshole"],
};

test("every preset's titles are spelt one way: Vice-Title, capitalised", () => {
  const shown = Object.fromEntries(Object.entries(TITLES).map(([preset, titles]) => [preset, titles.map(roleTitle)]));
  assert.deepEqual(shown.house, ["President", "Vice-President", "Neutral", "Vice-Asshole", "Asshole"]);
  assert.deepEqual(shown.club, ["President", "Vice-President", "Citizen", "Vice-Peasant", "Peasant"]);
  assert.deepEqual(shown.classic, ["President", "Vice-President", "Citizen", "Vice-Scum", "Scum"]);
  assert.deepEqual(shown.traditional, shown.house);
  for (const title of Object.values(shown).flat()) assert.match(title, /^(Vice-)?[A-Z][a-z]+$/, title);
});

// The server's own titles (PRESIDENT_ROLE_TITLES, written by tests/unit/web/test_js_deal.py).
const serverTitles = process.env.PRESIDENT_ROLE_TITLES;

test("the server's titles are shown in that one spelling", { skip: !serverTitles }, () => {
  const books = JSON.parse(serverTitles);
  assert.deepEqual(Object.keys(books).sort(), Object.keys(TITLES).sort());
  for (const [preset, byKey] of Object.entries(books)) {
    const shown = Object.values(byKey).map(roleTitle);
    assert.deepEqual(new Set(shown), new Set(TITLES[preset].map(roleTitle)), preset);
  }
});

test("places read 1st, 2nd, 3rd, 4th, 11th, 21st", () => {
  assert.deepEqual([0, 1, 2, 3, 10, 11, 12, 20].map(ordinal), ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st"]);
});

test("a seat out first on a 2 says why its place is at the bottom", () => {
  const plain = { out: 0, place: 0, penalised: false, finishWithTwo: true };
  assert.equal(outText(plain), "out 1st");
  const onTwo = "out 1st on a 2: the rules put them in a bottom place";
  assert.equal(outText({ ...plain, penalised: true, place: -1 }), onTwo); // seen as it happened
  assert.equal(outText({ ...plain, place: 3 }), onTwo); // seen late: below its going out
  assert.equal(outText({ ...plain, place: 3, finishWithTwo: false }), "out 1st"); // other rules
  assert.equal(outText({ out: 2, place: 0, penalised: false, finishWithTwo: true }), "out 3rd"); // moved up
});
