// The gateway's API from the browser: the typed client of @president/client
// (clients/typescript) over the web edge (same origin) with connect-web, the account's
// bearer token on every call (renewed before it expires), and refusals turned into words; a
// spectator's Watch at the audience replicas' door when the deployment has one.
//
// Where who you are is kept: the tab's session (access and refresh tokens) in
// sessionStorage, one session per tab, because a refresh token works once and one presented
// twice revokes its whole session (two tabs sharing one would sign each other out); a
// guest's id and device secret in localStorage, so a new tab (or the browser reopened) logs
// the guest in again with them (LogIn), as CreateGuest's device secret is meant to be used.

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  bearer as sendBearer,
  type GatewayClient,
  gatewayClient,
  refusal,
  renewal,
  type WatchResponse,
  watchBatches,
} from "@president/client";
import type { Credentials } from "@president/client/players";

const KEY = "president.identity";
/** A guest's id, device secret and name, kept on this device (localStorage). */
const DEVICE_KEY = "president.guest";
/** Refresh the access token this long before it expires. */
const REFRESH_MARGIN_SECONDS = 60;

interface Stored {
  token: string;
  refreshToken: string;
  expiresAt: number;
  playerId: string;
  name: string;
}

interface Device {
  guestId: string;
  deviceSecret: string;
  name: string;
}

function stored(): Stored | null {
  const text = sessionStorage.getItem(KEY);
  return text ? (JSON.parse(text) as Stored) : null;
}

function device(): Device | null {
  const text = localStorage.getItem(DEVICE_KEY);
  return text ? (JSON.parse(text) as Device) : null;
}

/** Who is signed in on this tab (its session in sessionStorage; a guest's device secret in
 * localStorage signs the guest in again in a new tab). */
export const identity = {
  get token(): string {
    return stored()?.token ?? "";
  },
  get playerId(): string {
    return stored()?.playerId ?? "";
  },
  get name(): string {
    return stored()?.name ?? "";
  },
  /** Keep a session's credentials (from CreateGuest, LogIn, Register or Refresh). */
  remember(credentials: Credentials | undefined, name: string): void {
    if (!credentials?.accessToken) throw new Error("the server sent no access token");
    const value: Stored = {
      token: credentials.accessToken,
      refreshToken: credentials.refreshToken,
      expiresAt: Number(credentials.accessExpiresAt),
      playerId: credentials.identity?.accountId ?? "",
      name: credentials.identity?.displayName || name,
    };
    sessionStorage.setItem(KEY, JSON.stringify(value));
    if (credentials.deviceSecret) {
      const guest: Device = { guestId: value.playerId, deviceSecret: credentials.deviceSecret, name: value.name };
      localStorage.setItem(DEVICE_KEY, JSON.stringify(guest));
    }
  },
  /** Sign the guest kept on this device in again (a new session for this tab); false when
   * there is none, or the server no longer knows it (then it is forgotten). */
  async resume(): Promise<boolean> {
    const guest = device();
    if (!guest) return false;
    try {
      const answer = await anonymous.logIn({ guestId: guest.guestId, deviceSecret: guest.deviceSecret });
      identity.remember(answer.credentials, guest.name);
      return true;
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.Unauthenticated) localStorage.removeItem(DEVICE_KEY);
      return false;
    }
  },
  /** This tab's session is over (the guest kept on this device stays). */
  clear(): void {
    sessionStorage.removeItem(KEY);
  },
  /** Signed out: the session, and the guest kept on this device. */
  forget(): void {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(DEVICE_KEY);
  },
};

const transport = (interceptors: Interceptor[]) => createConnectTransport({ baseUrl: location.origin, interceptors });

/** The calls that need no bearer (Refresh trades its own token). */
const anonymous: GatewayClient = gatewayClient(transport([]));

/** This tab's access token, renewed by one Refresh at a time shortly before it expires. */
const bearer = sendBearer({
  get accessToken(): string {
    return identity.token;
  },
  renew: renewal(anonymous, {
    session: () => {
      const now = stored();
      return now ? { refreshToken: now.refreshToken, accessExpiresAt: now.expiresAt } : null;
    },
    remember: (credentials) => identity.remember(credentials, stored()?.name ?? ""),
    marginSeconds: REFRESH_MARGIN_SECONDS,
  }),
});

export const gateway: GatewayClient = gatewayClient(transport([bearer]));

/** The stable ErrorInfo reason of a refusal ("" when it carries none). */
export function reasonOf(error: unknown): string {
  return refusal(error).reason;
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

/** Where spectators watch (the audience replicas' HTTP door), from the edge's /config.json:
 * "" when the deployment has none or it cannot be read. Asked once per page. */
let audienceUrl: Promise<string> | null = null;
function audience(): Promise<string> {
  audienceUrl ??= fetch("/config.json", { cache: "no-store" })
    .then((answer) => (answer.ok ? answer.json() : {}))
    .then((config: { audienceUrl?: string }) => config.audienceUrl ?? "")
    .catch(() => "");
  return audienceUrl;
}
let door: GatewayClient | null = null;
/** Tables where this identity holds a seat: the door refused it there (SEAT_HOLDER). */
const seatedAt = new Set<string>();

/** A table's changes, a message at a time. A page that holds no seat (``spectator``) watches
 * at the spectators' door when the deployment has one (a crowd there costs the players
 * nothing), and at the gateway if the door says it holds a seat after all; the gateway's
 * ``Watch`` is ``batched`` (a stream that fell behind catches up in one message), each
 * message's changes oldest first. */
export async function* watchTable(
  tableId: string,
  fromVersion: bigint,
  signal: AbortSignal,
  spectator = false,
): AsyncGenerator<WatchResponse[]> {
  const url = spectator && !seatedAt.has(tableId) ? await audience() : "";
  let from = fromVersion;
  if (url) {
    door ??= gatewayClient(createConnectTransport({ baseUrl: url, interceptors: [bearer] }));
    try {
      for await (const batch of watchBatches(door, { tableId, fromVersion }, { signal })) {
        from = 0n; // shown as a spectator's: a seat found later starts over from its own view
        yield batch;
      }
      return;
    } catch (error) {
      // It holds a seat (found at the start, or once it sat down): on at the gateway.
      if (reasonOf(error) !== "SEAT_HOLDER") throw error;
      seatedAt.add(tableId);
    }
  }
  yield* watchBatches(gateway, { tableId, fromVersion: from, batched: true }, { signal });
}
