// The President table's public gateway for Node and browsers: the messages and the
// GatewayService generated from protos/ (protobuf-es v2, in ./gen, by build.py), a typed
// Connect client on the transport you choose, the bearer token on every call (renewed
// before it expires), a table's changes batch by batch, and a refusal's status, stable
// reason and sentence read from its google.rpc.ErrorInfo.

import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  Code,
  ConnectError,
  createClient,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import {
  GatewayService,
  type WatchRequestSchema,
  type WatchResponse,
} from "./gen/president/gateway/v1/gateway_pb.js";
import type { Credentials } from "./gen/president/players/v1/players_pb.js";

export * from "./gen/president/gateway/v1/gateway_pb.js";
export * as events from "./gen/president/events/v1/events_pb.js";
export * as game from "./gen/president/game/v1/game_pb.js";
export * as players from "./gen/president/players/v1/players_pb.js";
export * as standings from "./gen/president/standings/v1/standings_pb.js";
export * as tournaments from "./gen/president/tournaments/v1/tournaments_pb.js";
export * as rpc from "./gen/google/rpc/error_details_pb.js";

/** The gateway's typed client: one method per RPC (`createGuest`, `createTable`, `watch`...). */
export type GatewayClient = Client<typeof GatewayService>;

/** Who the client is: the access token sent with every call (empty: none yet). */
export interface Identity {
  readonly accessToken: string;
  /** Awaited before every call: renews the access token when it is about to expire
   * (see `renewal`). */
  renew?: () => Promise<void>;
}

/** An interceptor that sends `identity`'s access token as `authorization: Bearer ...`,
 * after `identity.renew()` when it has one. */
export function bearer(identity: Identity): Interceptor {
  return (next) => async (request) => {
    await identity.renew?.();
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

/** A session's refresh token and when its access token expires. */
export interface Renewable {
  refreshToken: string;
  /** When the access token expires (Unix seconds, as `Credentials.accessExpiresAt`). */
  accessExpiresAt: number | bigint;
}

/** What `renewal` renews, and where it keeps the new credentials. */
export interface RenewalOptions {
  /** The session now (null: none, nothing to renew). */
  session(): Renewable | null;
  /** Keep the credentials Refresh returned (the old refresh token is spent). */
  remember(credentials: Credentials): void;
  /** Renew this many seconds before the access token expires (default 60). */
  marginSeconds?: number;
  /** The time now in Unix seconds (default: this machine's clock). */
  now?: () => number;
}

/**
 * A function that renews the session when its access token expires within the margin:
 * one `Refresh` on `client` (a client whose transport sends no bearer), its credentials
 * handed to `remember`. Callers that arrive while a Refresh is under way wait for that
 * one: a refresh token works once, and one presented twice revokes its whole session.
 * Give it to an `Identity` as `renew`.
 */
export function renewal(client: GatewayClient, options: RenewalOptions): () => Promise<void> {
  const margin = options.marginSeconds ?? 60;
  const now = options.now ?? (() => Date.now() / 1000);
  let under: Promise<void> | null = null;
  return async () => {
    if (!under) {
      const session = options.session();
      if (!session?.refreshToken || Number(session.accessExpiresAt) - now() > margin) return;
      under = client
        .refresh({ refreshToken: session.refreshToken })
        .then((answer) => {
          if (!answer.credentials?.accessToken) throw new Error("Refresh returned no credentials");
          options.remember(answer.credentials);
        })
        .finally(() => {
          under = null;
        });
    }
    await under;
  };
}

/**
 * A table's changes, a batch at a time: `Watch` with `request` (set `batched: true` to
 * take the changes ready together in one message), each message's `changes` oldest
 * first, or the message itself when it carries no `changes` (an unbatched Watch).
 * Draw a batch once, as its newest view.
 */
export async function* watchBatches(
  client: GatewayClient,
  request: MessageInitShape<typeof WatchRequestSchema>,
  options?: CallOptions,
): AsyncGenerator<WatchResponse[]> {
  for await (const message of client.watch(request, options)) {
    yield message.changes.length ? message.changes : [message];
  }
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
