// Sign in as a guest, play a practice table with bots to its end, and read a refusal's
// reason: the gateway over gRPC with @grpc/grpc-js and @grpc/proto-loader.
//
//   npm ci && node quickstart.mjs 127.0.0.1:50051 ../../protos
//
// (the gateway's address, as `make run` prints it, and the repository's protos/ folder).
// It prints one JSON line: the finished game (winners, standings, scores) and the refusal.
import path from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { gatewayClient, grpc } from "./gateway.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const address = process.argv[2] ?? "127.0.0.1:50051";
const protos = process.argv[3] ?? path.join(here, "..", "..", "protos");
const gateway = gatewayClient(protos, address);

// `token` goes as `authorization: Bearer <token>`.
function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

// A unary call as a promise.
function call(method, request, token = "") {
  return new Promise((resolve, reject) =>
    gateway[method](request, bearer(token), (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

// The status details of a refusal (the trailer grpc-status-details-bin, a google.rpc.Status)
// decoded with the vendored protos/google/rpc/*.proto: its ErrorInfo's reason.
const rpc = protobuf.loadSync([
  path.join(protos, "google/rpc/status.proto"),
  path.join(protos, "google/rpc/error_details.proto"),
]);
const Status = rpc.lookupType("google.rpc.Status");
const ErrorInfo = rpc.lookupType("google.rpc.ErrorInfo");

function reasonOf(error) {
  const [bytes] = error.metadata?.get("grpc-status-details-bin") ?? [];
  if (!bytes) return "";
  for (const detail of Status.decode(bytes).details) {
    if (detail.type_url === "type.googleapis.com/google.rpc.ErrorInfo") {
      return ErrorInfo.decode(detail.value).reason;
    }
  }
  return "";
}

const guest = await call("CreateGuest", { display_name: "Ada" });
const token = guest.credentials.access_token;
// A practice table: you and three bots; one round makes a short game.
const options = { preset: "classic", options: { game_end: "rounds:1" } };
const created = await call("CreateTable", { options, display_name: "Ada" }, token);
const table_id = created.table_id;
await call("StartGame", { table_id }, token);

// Watch: a snapshot, then every change, each with the whole view as your seat sees it.
const stream = gateway.Watch({ table_id }, bearer(token));
let view;
for await (const change of stream) {
  view = change.view;
  if (view.phase === "game_over") break;
  const [action] = view.round.legal; // the first of the legal moves; none: the bots play
  if (!action) continue;
  const chosen = { table_id, expected_version: view.version };
  try {
    if (action.verb === "play") await call("Play", { ...chosen, cards: action.cards }, token);
    else if (action.verb === "pass") await call("Pass", chosen, token);
    else await call("ReturnCards", { ...chosen, cards: action.cards }, token); // "give"
  } catch (error) {
    if (reasonOf(error) !== "STALE") throw error; // STALE: the stream brings the newer view
  }
}
stream.cancel();

let refusal = null;
try {
  await call("JoinTable", { table_id: "no-such-table", display_name: "Ada" }, token);
} catch (error) {
  refusal = { code: grpc.status[error.code], reason: reasonOf(error) };
}
gateway.close();
console.log(
  JSON.stringify({
    account_id: guest.credentials.identity.account_id,
    table_id,
    phase: view.phase,
    winners: view.winners,
    standings: view.last_standings, // seats, best first
    scores: view.seats.map((seat) => seat.score),
    version: view.version, // uint64: a string, thanks to longs: String
    refusal,
  }),
);
