// The package's own tests (node --test, on the built dist/): a refusal's code, reason,
// domain, metadata and retry delay read from a ConnectError's details, and the typed
// client has the gateway's methods.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeName, GatewayService, gatewayClient, refusal, rpc } from "../dist/index.js";

test("refusal reads the ErrorInfo and RetryInfo of a ConnectError", () => {
  const info = create(rpc.ErrorInfoSchema, {
    reason: "RATE_LIMITED",
    domain: "president.cards",
    metadata: { retry_after_seconds: "2" },
  });
  const retry = create(rpc.RetryInfoSchema, { retryDelay: { seconds: 2n, nanos: 500_000_000 } });
  const error = new ConnectError("slow down", Code.ResourceExhausted, undefined, [
    { desc: rpc.ErrorInfoSchema, value: info },
    { desc: rpc.RetryInfoSchema, value: retry },
  ]);
  assert.deepEqual(refusal(error), {
    code: "resource_exhausted",
    reason: "RATE_LIMITED",
    domain: "president.cards",
    metadata: { retry_after_seconds: "2" },
    message: "slow down",
    retryAfterSeconds: 2.5,
  });
});

test("an error without details has an empty reason", () => {
  const found = refusal(new Error("socket hang up"));
  assert.equal(found.reason, "");
  assert.equal(found.code, "unknown");
});

test("codeName writes Connect's names", () => {
  assert.equal(codeName(Code.NotFound), "not_found");
  assert.equal(codeName(Code.Unauthenticated), "unauthenticated");
});

test("the client has the gateway's methods", () => {
  const client = gatewayClient({ unary: async () => {}, stream: async () => {} });
  assert.equal(GatewayService.typeName, "president.gateway.v1.GatewayService");
  for (const method of ["createGuest", "createTable", "getTable", "watch", "play", "getRatings"]) {
    assert.equal(typeof client[method], "function", method);
  }
});
