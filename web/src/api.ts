// The gateway's API from the browser: one Connect client over the web edge (same origin),
// the account's bearer token on every call, and refusals turned into words.

import { BinaryReader } from "@bufbuild/protobuf/wire";
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { GatewayService } from "../gen/president/gateway/v1/gateway_pb";

const ERROR_INFO = "google.rpc.ErrorInfo";
const TOKEN_KEY = "president.token";
const PLAYER_KEY = "president.player";
const NAME_KEY = "president.name";

/** Who is signed in on this tab (sessionStorage: closing the tab signs out). */
export const identity = {
  get token(): string {
    return sessionStorage.getItem(TOKEN_KEY) ?? "";
  },
  get playerId(): string {
    return sessionStorage.getItem(PLAYER_KEY) ?? "";
  },
  get name(): string {
    return sessionStorage.getItem(NAME_KEY) ?? "";
  },
  set(token: string, playerId: string, name: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(PLAYER_KEY, playerId);
    sessionStorage.setItem(NAME_KEY, name);
  },
  clear(): void {
    for (const key of [TOKEN_KEY, PLAYER_KEY, NAME_KEY]) sessionStorage.removeItem(key);
  },
};

const bearer: Interceptor = (next) => async (request) => {
  if (identity.token) request.header.set("authorization", `Bearer ${identity.token}`);
  return next(request);
};

export const gateway: Client<typeof GatewayService> = createClient(
  GatewayService,
  createConnectTransport({ baseUrl: location.origin, interceptors: [bearer] }),
);

/** The stable ErrorInfo reason of a refusal ("" when it carries none). */
export function reasonOf(error: unknown): string {
  if (!(error instanceof ConnectError)) return "";
  for (const detail of error.details) {
    if (!("type" in detail) || detail.type !== ERROR_INFO) continue;
    const reader = new BinaryReader(detail.value);
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1) return reader.string();
      reader.skip(wireType);
    }
  }
  return "";
}

/** A refusal or a failure in a sentence a person reads. */
export function sentence(error: unknown): string {
  if (error instanceof ConnectError) {
    if (error.code === Code.Unavailable) return "The server cannot be reached right now; try again in a moment.";
    return error.rawMessage || `The server refused (${Code[error.code]}).`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A fresh id for a command (retries of one command carry the same id). */
export function commandId(): string {
  return crypto.randomUUID();
}
