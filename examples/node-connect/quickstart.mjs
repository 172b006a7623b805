// Sign in as a guest, play a practice table with bots to its end, and read a refusal's
// reason: the web edge in Connect (JSON) with connect-node and @president/client.
//
//   python ../../clients/typescript/build.py && npm ci && node quickstart.mjs http://127.0.0.1:8080
//
// (the web edge's URL, as `make run` prints it). It prints one JSON line: the finished
// game (winners, standings, scores) and the refusal.
import { createConnectTransport } from "@connectrpc/connect-node";
import { bearer, gatewayClient, refusal } from "@president/client";

const identity = { accessToken: "" };
const transport = createConnectTransport({
  baseUrl: process.argv[2] ?? "http://127.0.0.1:8080",
  httpVersion: "1.1", // the edge speaks HTTP/1.1
  useBinaryFormat: false, // Connect JSON; true for binary protobuf
  interceptors: [bearer(identity)],
});
const gateway = gatewayClient(transport);

const guest = await gateway.createGuest({ displayName: "Ada" });
identity.accessToken = guest.credentials.accessToken;
// A practice table: you and three bots; one round makes a short game.
const options = { preset: "classic", options: { game_end: "rounds:1" } };
const { tableId } = await gateway.createTable({ options, displayName: "Ada" });
await gateway.startGame({ tableId });

// Watch: a snapshot, then every change, each with the whole view as your seat sees it.
let view;
for await (const change of gateway.watch({ tableId })) {
  view = change.view;
  if (view.phase === "game_over") break;
  const [action] = view.round.legal; // the first of the legal moves; none: the bots play
  if (!action) continue;
  const chosen = { tableId, expectedVersion: view.version };
  try {
    if (action.verb === "play") await gateway.play({ ...chosen, cards: action.cards });
    else if (action.verb === "pass") await gateway.pass(chosen);
    else await gateway.returnCards({ ...chosen, cards: action.cards }); // "give"
  } catch (error) {
    if (refusal(error).reason !== "STALE") throw error; // STALE: the stream brings the newer view
  }
}

let refused = null;
try {
  await gateway.joinTable({ tableId: "no-such-table", displayName: "Ada" });
} catch (error) {
  const { code, reason } = refusal(error);
  refused = { code, reason };
}
console.log(
  JSON.stringify({
    account_id: guest.credentials.identity.accountId,
    table_id: tableId,
    phase: view.phase,
    winners: view.winners,
    standings: view.lastStandings, // seats, best first
    scores: view.seats.map((seat) => seat.score),
    version: String(view.version), // uint64: a bigint
    refusal: refused,
  }),
);
