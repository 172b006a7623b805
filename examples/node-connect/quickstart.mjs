// Sign in as a guest, create a practice table with bots, read it, and read a refusal's
// reason: the web edge in Connect (JSON) with connect-node and @president/client.
//
//   python ../../clients/typescript/build.py && npm ci && node quickstart.mjs http://127.0.0.1:8080
//
// (the web edge's URL, as `make run` prints it). It prints one JSON line.
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
const created = await gateway.createTable({ options: { preset: "classic" }, displayName: "Ada" });
const { view } = await gateway.getTable({ tableId: created.tableId });
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
    table_id: created.tableId,
    phase: view.phase,
    seats: view.seats.length,
    version: String(view.version), // uint64: a bigint
    refusal: refused,
  }),
);
