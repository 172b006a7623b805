// What a table's Watch does once its stream ended: go on after the last change drawn, watch
// again from a snapshot, or stop. Pure, with no imports: Node runs it in web/test/resume.test.js.

/** google.rpc codes (Connect's numbers) a stream may end with and go on after its last change. */
const RESUMABLE = new Set([
  1, // canceled
  2, // unknown
  4, // deadline exceeded
  13, // internal
  14, // unavailable
  16, // unauthenticated (the token is renewed first)
]);
const DATA_LOSS = 15;

export type NextWatch = "resume" | "snapshot" | "stop";

/** After a stream ended with ``code`` and ErrorInfo ``reason``: ``resume`` after the last change,
 * ``snapshot`` when the server's history was rewound (a database failover lost changes this page
 * drew: they never happened, so the table is drawn again from what the store kept), or ``stop``. */
export function afterWatchEnded(code: number, reason: string): NextWatch {
  if (code === DATA_LOSS && reason === "HISTORY_REWOUND") return "snapshot";
  return RESUMABLE.has(code) ? "resume" : "stop";
}
