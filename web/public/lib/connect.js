// Calls to the web edge in the Connect protocol's JSON form, with the browser's fetch.
//
// Unary: POST application/json. Server streaming (Watch): POST
// application/connect+json with one enveloped request; the answer is enveloped
// messages, the last (flag 0x02) holding the end of the stream and any error.
// A refusal carries the gateway's code, sentence and ErrorInfo reason.

const SERVICE = "/president.gateway.v1.GatewayService";
const END_STREAM = 0x02;
const TEXT = new TextDecoder();

export class CallError extends Error {
  constructor(code, message, reason) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

function reasonOf(error) {
  const detail = (error.details ?? []).find((d) => d.type === "google.rpc.ErrorInfo");
  if (!detail) return "";
  const padded = detail.value.replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(padded + "=".repeat((4 - (padded.length % 4)) % 4)), (c) =>
    c.charCodeAt(0),
  );
  // ErrorInfo field 1 (reason): tag 0x0a, a one-byte length for any reason this server sends.
  return bytes[0] === 0x0a ? TEXT.decode(bytes.subarray(2, 2 + bytes[1])) : "";
}

function refusal(error) {
  return new CallError(error.code ?? "unknown", error.message ?? "", reasonOf(error));
}

function headers(token, contentType) {
  const out = { "content-type": contentType, "connect-protocol-version": "1" };
  if (token) out.authorization = `Bearer ${token}`;
  return out;
}

/** One unary call; resolves to the answer's JSON or throws a CallError. */
export async function call(method, request = {}, token = "") {
  const answer = await fetch(`${SERVICE}/${method}`, {
    method: "POST",
    headers: headers(token, "application/json"),
    body: JSON.stringify(request),
  });
  const body = await answer.json();
  if (!answer.ok) throw refusal(body);
  return body;
}

function envelope(json) {
  const payload = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(5 + payload.length);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/**
 * A server stream: calls ``onMessage`` with each message's JSON until the stream ends,
 * ``signal`` aborts, or ``onMessage`` returns true (then the stream is closed).
 */
export async function stream(method, request, token, onMessage, signal) {
  const answer = await fetch(`${SERVICE}/${method}`, {
    method: "POST",
    headers: headers(token, "application/connect+json"),
    body: envelope(request),
    signal,
  });
  if (!answer.ok) throw refusal(await answer.json());
  const reader = answer.body.getReader();
  let buffer = new Uint8Array(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer, 0);
    joined.set(value, buffer.length);
    buffer = joined;
    while (buffer.length >= 5) {
      const view = new DataView(buffer.buffer, buffer.byteOffset);
      const size = view.getUint32(1);
      if (buffer.length < 5 + size) break;
      const flags = buffer[0];
      const message = JSON.parse(TEXT.decode(buffer.subarray(5, 5 + size)) || "{}");
      buffer = buffer.subarray(5 + size);
      if (flags & END_STREAM) {
        if (message.error) throw refusal(message.error);
        return;
      }
      if (onMessage(message)) {
        await reader.cancel();
        return;
      }
    }
  }
}
