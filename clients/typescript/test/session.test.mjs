// The package's own tests (node --test, on the built dist/): the bearer token on every
// call, renewed by one Refresh when it is about to expire, and a table's changes batch by
// batch. The gateway here is connect's in-memory router serving GatewayService.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { ChatPostedSchema } from "@president/client/events";
import { TableViewSchema } from "@president/client/game";
import { CredentialsSchema } from "@president/client/players";
import {
  bearer,
  GatewayService,
  gatewayClient,
  renewal,
  watchBatches,
  WatchResponseSchema,
} from "../dist/index.js";

/** A gateway that answers WhoAmI, keeping the bearer it was sent, and Refresh with new
 * tokens, keeping the refresh token it was sent; `watch` answers Watch. `connect(...)`
 * is a transport to it with those interceptors in front of every call. */
function gateway(watch = async function* () {}) {
  const seen = { refreshes: [], bearers: [] };
  const routes = ({ service }) =>
    service(GatewayService, {
      async whoAmI(_request, context) {
        seen.bearers.push(context.requestHeader.get("authorization"));
        return {};
      },
      async refresh(request) {
        seen.refreshes.push(request.refreshToken);
        await new Promise((resolve) => setTimeout(resolve, 10));
        const n = seen.refreshes.length;
        return {
          credentials: create(CredentialsSchema, {
            accessToken: `access-${n}`,
            accessExpiresAt: 10_000n,
            refreshToken: `refresh-${n}`,
          }),
        };
      },
      watch,
    });
  const connect = (...interceptors) => createRouterTransport(routes, { transport: { interceptors } });
  return { seen, connect };
}

/** A session kept in memory, renewed through `anonymous` at the time `clock.now`. */
function session(anonymous, clock, accessExpiresAt) {
  const kept = { accessToken: "access-0", refreshToken: "refresh-0", accessExpiresAt };
  const renew = renewal(anonymous, {
    session: () => kept,
    remember: (credentials) => Object.assign(kept, credentials),
    now: () => clock.now,
  });
  return { kept, identity: { get accessToken() { return kept.accessToken; }, renew } };
}

test("bearer sends the access token, and nothing before there is one", async () => {
  const { seen, connect } = gateway();
  const identity = { accessToken: "" };
  const client = gatewayClient(connect(bearer(identity)));
  await client.whoAmI({});
  identity.accessToken = "a-token";
  await client.whoAmI({});
  assert.deepEqual(seen.bearers, [null, "Bearer a-token"]);
});

test("a token far from expiry is sent as it is, with no Refresh", async () => {
  const { seen, connect } = gateway();
  const clock = { now: 1_000 };
  const { identity } = session(gatewayClient(connect()), clock, 1_000 + 61);
  await gatewayClient(connect(bearer(identity))).whoAmI({});
  assert.deepEqual(seen.refreshes, []);
  assert.deepEqual(seen.bearers, ["Bearer access-0"]);
});

test("a token about to expire is renewed once, however many calls wait for it", async () => {
  const { seen, connect } = gateway();
  const clock = { now: 1_000 };
  const { kept, identity } = session(gatewayClient(connect()), clock, 1_000 + 59);
  const client = gatewayClient(connect(bearer(identity)));
  await Promise.all([client.whoAmI({}), client.whoAmI({}), client.whoAmI({})]);
  assert.deepEqual(seen.refreshes, ["refresh-0"]); // a refresh token works once
  assert.deepEqual(seen.bearers, ["Bearer access-1", "Bearer access-1", "Bearer access-1"]);
  assert.equal(kept.refreshToken, "refresh-1");
  assert.equal(kept.accessExpiresAt, 10_000n);
  clock.now = 10_000 - 30; // the new token is about to expire in turn
  await client.whoAmI({});
  assert.deepEqual(seen.refreshes, ["refresh-0", "refresh-1"]);
});

test("a session with no refresh token is not renewed", async () => {
  const { seen, connect } = gateway();
  const renew = renewal(gatewayClient(connect()), {
    session: () => ({ refreshToken: "", accessExpiresAt: 0 }),
    remember: () => assert.fail("nothing to remember"),
  });
  await renew();
  assert.deepEqual(seen.refreshes, []);
});

test("watchBatches yields a batched message's changes, and an unbatched message alone", async () => {
  const asked = [];
  const view = (version) => create(TableViewSchema, { version: BigInt(version) });
  const { connect } = gateway(async function* (request) {
    asked.push(request.batched);
    if (request.batched) {
      yield { changes: [{ view: view(1) }, { view: view(2) }] };
      yield { changes: [{ view: view(3) }] };
    } else {
      yield create(WatchResponseSchema, { view: view(4) });
    }
  });
  const client = gatewayClient(connect());
  const versions = async (request) => {
    const batches = [];
    for await (const batch of watchBatches(client, request)) {
      batches.push(batch.map((change) => Number(change.view.version)));
    }
    return batches;
  };
  assert.deepEqual(await versions({ tableId: "t", batched: true }), [[1, 2], [3]]);
  assert.deepEqual(await versions({ tableId: "t" }), [[4]]);
  assert.deepEqual(asked, [true, false]);
});

test("the messages' own modules are the package's subpaths", () => {
  assert.equal(ChatPostedSchema.typeName, "president.events.v1.ChatPosted");
  assert.equal(TableViewSchema.typeName, "president.game.v1.TableView");
});

