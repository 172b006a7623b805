// Sign in as a guest, create a practice table with bots, read it, and read a refusal's
// reason: the gateway over gRPC with @grpc/grpc-js and @grpc/proto-loader.
//
//   npm ci && node quickstart.mjs 127.0.0.1:50051 ../../protos
//
// (the gateway's address, as `make run` prints it, and the repository's protos/ folder).
// It prints one JSON line.
import path from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { gatewayClient, grpc } from "./gateway.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const address = process.argv[2] ?? "127.0.0.1:50051";
const protos = process.argv[3] ?? path.join(here, "..", "..", "protos");
const gateway = gatewayClient(protos, address);

// A unary call as a promise; `token` goes as `authorization: Bearer <token>`.
function call(method, request, token = "") {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    gateway[method](request, metadata, (error, response) =>
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
const created = await call("CreateTable", { options: { preset: "classic" }, display_name: "Ada" }, token);
const { view } = await call("GetTable", { table_id: created.table_id }, token);
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
    table_id: created.table_id,
    phase: view.phase,
    seats: view.seats.length,
    version: view.version, // uint64: a string, thanks to longs: String
    refusal,
  }),
);
