// After a table's Watch ended (web/src/resume.ts, run by Node as TypeScript): a rewound
// history is watched again from a snapshot, a cut stream resumes, a refusal stops.

import { test } from "node:test";
import assert from "node:assert/strict";

import { afterWatchEnded } from "../src/resume.ts";

test("a history the server rewound is watched again from a snapshot", () => {
  assert.equal(afterWatchEnded(15, "HISTORY_REWOUND"), "snapshot");
});

test("other data loss stops: the page cannot tell what it lost", () => {
  assert.equal(afterWatchEnded(15, "SOMETHING_ELSE"), "stop");
});

test("a stream cut off resumes after its last change", () => {
  for (const code of [1, 2, 4, 13, 14, 16]) assert.equal(afterWatchEnded(code, ""), "resume");
});

test("a refusal stops", () => {
  for (const code of [3, 5, 7, 9]) assert.equal(afterWatchEnded(code, "NOT_FOUND"), "stop");
});
