// The President table's public gateway for Node and browsers: the messages and the
// GatewayService generated from protos/ (protobuf-es v2, in ./gen, by build.py), a typed
// Connect client on the transport you choose, the bearer token on every call, and a
// refusal's status, stable reason and sentence read from its google.rpc.ErrorInfo.

import {
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { GatewayService } from "./gen/president/gateway/v1/gateway_pb.js";

export * from "./gen/president/gateway/v1/gateway_pb.js";
export * as events from "./gen/president/events/v1/events_pb.js";
export * as game from "./gen/president/game/v1/game_pb.js";
export * as players from "./gen/president/players/v1/players_pb.js";
export * as standings from "./gen/president/standings/v1/standings_pb.js";
export * as rpc from "./gen/google/rpc/error_details_pb.js";

/** The gateway's typed client: one method per RPC (`createGuest`, `createTable`, `watch`...). */
export type GatewayClient = Client<typeof GatewayService>;

/** Who the client is: the access token sent with every call (empty: none yet). */
export interface Identity {
  accessToken: string;
}

/** An interceptor that sends `identity`'s access token as `authorization: Bearer ...`. */
export function bearer(identity: Identity): Interceptor {
  return (next) => async (request) => {
    if (identity.accessToken) {
      request.header.set("authorization", `Bearer ${identity.accessToken}`);
    }
    return next(request);
  };
}

/**
 * A typed client of the gateway on `transport` (from `@connectrpc/connect-node`:
 * `createConnectTransport` at the web edge or `createGrpcTransport` at the gateway; from
 * `@connectrpc/connect-web` in a browser). Give the transport `interceptors: [bearer(identity)]`
 * and set `identity.accessToken` once signed in.
 */
export function gatewayClient(transport: Transport): GatewayClient {
  return createClient(GatewayService, transport);
}

/** A refused call, as the gateway explains it. */
export interface Refusal {
  /** The status, as Connect names it (`not_found`, `invalid_argument`...). */
  code: string;
  /** The stable, machine-readable reason (`TABLE_NOT_FOUND`); empty when none was sent. */
  reason: string;
  /** The reason's domain (`president.cards`). */
  domain: string;
  /** The reason's details (`retry_after_seconds`...). */
  metadata: Record<string, string>;
  /** The sentence for a person. */
  message: string;
  /** How long the server asks to wait before trying again (seconds), when it does. */
  retryAfterSeconds?: number;
}

/** The status, reason and sentence of an error a call threw. */
export function refusal(error: unknown): Refusal {
  const failed = ConnectError.from(error);
  const [info] = failed.findDetails(ErrorInfoSchema);
  const [retry] = failed.findDetails(RetryInfoSchema);
  const delay = retry?.retryDelay;
  return {
    code: codeName(failed.code),
    reason: info?.reason ?? "",
    domain: info?.domain ?? "",
    metadata: { ...(info?.metadata ?? {}) },
    message: failed.rawMessage,
    ...(delay ? { retryAfterSeconds: Number(delay.seconds) + delay.nanos / 1e9 } : {}),
  };
}

/** `Code.NotFound` as the Connect protocol writes it: `not_found`. */
export function codeName(code: Code): string {
  return Code[code].replace(/[A-Z]/g, (letter, at: number) =>
    (at ? "_" : "") + letter.toLowerCase(),
  );
}
