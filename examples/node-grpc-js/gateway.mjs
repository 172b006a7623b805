// The gateway's service as a Node client builds it the usual way: @grpc/proto-loader on
// protos/ (protobufjs underneath), with the options its README shows.
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

export const LOADER_OPTIONS = {
  keepCase: true,
  longs: String, // uint64 versions as strings
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The package definition of the gateway's proto, loaded from `protos` (a directory). */
export function gatewayDefinition(protos) {
  return protoLoader.loadSync("president/gateway/v1/gateway.proto", {
    ...LOADER_OPTIONS,
    includeDirs: [protos],
  });
}

export const SERVICE = "president.gateway.v1.GatewayService";

/** A client of the gateway at `address` (host:port, no TLS). */
export function gatewayClient(protos, address) {
  const loaded = grpc.loadPackageDefinition(gatewayDefinition(protos));
  return new loaded.president.gateway.v1.GatewayService(
    address,
    grpc.credentials.createInsecure(),
  );
}

export { grpc };
