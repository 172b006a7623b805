// Decode each message the way @grpc/grpc-js does (the method's responseDeserialize) and
// encode the object back (responseSerialize). Reads JSON lines {"method", "data"}
// (base64) on stdin; writes the re-encoded bytes as JSON lines {"data"} (base64).
// A field sent twice that protobufjs replaces instead of merging comes back without
// the part it dropped.
import { createInterface } from "node:readline";
import { SERVICE, gatewayDefinition } from "../../../examples/node-grpc-js/gateway.mjs";

const [protos] = process.argv.slice(2);
const service = gatewayDefinition(protos)[SERVICE];
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { method, data } = JSON.parse(line);
  const definition = service[method];
  if (definition === undefined || !definition.responseStream) {
    throw new Error(`${method} is not a streaming method of ${SERVICE}`);
  }
  const decoded = definition.responseDeserialize(Buffer.from(data, "base64"));
  const encoded = definition.responseSerialize(decoded);
  process.stdout.write(`${JSON.stringify({ data: Buffer.from(encoded).toString("base64") })}\n`);
}
