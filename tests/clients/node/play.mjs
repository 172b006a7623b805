// A whole game through the gateway by a Node client built the usual way (@grpc/grpc-js,
// @grpc/proto-loader): guests sit at a table with bots, the host starts it, each guest
// plays legal moves read from its own view until the game is over. The first guest
// watches with Watch and acts with calls, the second acts on one Session stream.
//
//   node play.mjs <protos dir> <gateway host:port> [preset] [game_end]
//
// Prints one JSON line: the table, and per guest every change it saw (version, seats in
// the view, phase), its actions and the refusals by reason. Exits 1 when a change came
// without a whole view (no seats, or a version that does not increase), 2 on a timeout.
import { randomUUID } from "node:crypto";
import { gatewayClient, grpc } from "../../../examples/node-grpc-js/gateway.mjs";

const [protos, address, preset = "classic", gameEnd = "rounds:2"] = process.argv.slice(2);
const SEATS = 4;
const GUESTS = 2;
const TIMEOUT_MS = 150_000;

const gateway = gatewayClient(protos, address);

function call(method, request, token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    gateway[method](request, metadata, { deadline: Date.now() + 30_000 }, (error, response) =>
      error ? reject(error) : resolve(response),
    );
  });
}

/** The length-delimited fields of a serialized message, as [number, bytes] (others skipped). */
function* delimited(bytes) {
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    const type = tag % 8;
    if (type === 0) varint();
    else if (type === 1) at += 8;
    else if (type === 5) at += 4;
    else if (type === 2) {
      const length = varint();
      yield [Math.floor(tag / 8), bytes.subarray(at, at + length)];
      at += length;
    } else throw new Error(`wire type ${type} in a status`);
  }
}

/** The refusal's reason: google.rpc.Status.details (3) hold an Any whose value (2) is an
 * ErrorInfo, whose reason is its field 1 (read by hand: googleapis' protos are not here). */
function reasonOf(error) {
  const status = error.metadata?.get("grpc-status-details-bin")?.[0];
  for (const [number, any] of status ? delimited(status) : []) {
    if (number !== 3) continue;
    for (const [field, info] of delimited(any)) {
      if (field !== 2) continue;
      for (const [part, reason] of delimited(info)) {
        if (part === 1) return Buffer.from(reason).toString();
      }
    }
  }
  return grpc.status[error.code] ?? String(error.code);
}

/** What a seat does with a view: the first "give", else the first "play", else pass. */
function choose(view) {
  const legal = view.round?.legal ?? [];
  for (const verb of ["give", "play", "pass"]) {
    const action = legal.find((candidate) => candidate.verb === verb);
    if (action) return action;
  }
  return null;
}

class Guest {
  constructor(name) {
    this.name = name;
    this.changes = []; // [version, seats in the view, phase]
    this.actions = 0;
    this.refused = {};
    this.lastVersion = 0;
    this.broken = null;
    this.over = false;
  }

  async signIn() {
    const created = await call("CreateGuest", { display_name: this.name });
    this.token = created.credentials.access_token;
  }

  /** Record a change; false (and `broken` says why) when its view is not whole. */
  see(change) {
    const view = change.view;
    const version = Number(change.version);
    const seats = view?.seats?.length ?? 0;
    this.changes.push([version, seats, view?.phase ?? ""]);
    if (seats !== SEATS) {
      this.broken = `change ${version}: ${seats} seats in the view (of ${SEATS})`;
    } else if (Number(view.version) !== version) {
      this.broken = `change ${version}: its view is at version ${view.version}`;
    } else if (version <= this.lastVersion) {
      this.broken = `change ${version} after ${this.lastVersion}`;
    }
    this.lastVersion = Math.max(this.lastVersion, version);
    if (view?.phase === "game_over") this.over = true;
    return this.broken === null;
  }

  /** The command this view calls for, as [method, request], or null. */
  command(view, host) {
    const table_id = this.tableId;
    const expected_version = view.version;
    const command_id = `v${view.version}`;
    if (host && view.phase === "between_rounds") {
      const choice = "HOST_CHOICE_NEXT_ROUND";
      return ["HostAction", { choice, table_id, command_id, expected_version }];
    }
    if (view.phase !== "round") return null;
    const action = choose(view);
    if (action === null) return null;
    const rapid = view.round.to_act === undefined || view.round.to_act === null;
    const trick = rapid ? { trick_version: view.round.trick_version } : {};
    if (action.verb === "give") {
      return ["ReturnCards", { cards: action.cards, table_id, command_id, expected_version }];
    }
    if (action.verb === "play") {
      return ["Play", { cards: action.cards, table_id, command_id, expected_version, ...trick }];
    }
    return ["Pass", { table_id, command_id, expected_version, ...trick }];
  }

  refuse(reason) {
    this.refused[reason] = (this.refused[reason] ?? 0) + 1;
  }

  report() {
    return {
      name: this.name,
      seat: this.seat,
      changes: this.changes,
      actions: this.actions,
      refused: this.refused,
      broken: this.broken,
      over: this.over,
    };
  }
}

/** Watch the table and act with a call per action, until the game is over. */
async function playWithCalls(guest, host) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${guest.token}`);
  const stream = gateway.Watch({ table_id: guest.tableId, from_version: 0 }, metadata);
  try {
    for await (const change of stream) {
      if (!guest.see(change) || guest.over) return;
      const command = guest.command(change.view, host);
      if (command === null) continue;
      try {
        await call(command[0], command[1], guest.token);
        guest.actions += 1;
      } catch (error) {
        guest.refuse(reasonOf(error));
      }
    }
  } finally {
    stream.cancel();
  }
}

/** Watch and act on one Session stream, until the game is over. */
async function playOnSession(guest, host) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${guest.token}`);
  const stream = gateway.Session(metadata);
  stream.write({ watch: { table_id: guest.tableId, from_version: 0 } });
  const KINDS = {
    HostAction: "host_action",
    ReturnCards: "return_cards",
    Play: "play",
    Pass: "pass",
  };
  try {
    for await (const response of stream) {
      for (const result of response.results ?? []) {
        if (result.refused) guest.refuse(result.refused.reason);
        else guest.actions += 1;
      }
      for (const change of response.changes ?? []) {
        if (!guest.see(change) || guest.over) return;
        const command = guest.command(change.view, host);
        if (command !== null) stream.write({ [KINDS[command[0]]]: command[1] });
      }
    }
  } finally {
    stream.cancel();
  }
}

const guests = Array.from({ length: GUESTS }, (_, index) => new Guest(`Node ${index}`));

async function main() {
  for (const guest of guests) await guest.signIn();
  const [host, ...others] = guests;
  const created = await call(
    "CreateTable",
    {
      options: { preset, options: { game_end: gameEnd } },
      seat_count: SEATS,
      visibility: "VISIBILITY_PUBLIC",
      display_name: host.name,
      command_id: randomUUID(),
    },
    host.token,
  );
  host.tableId = created.table_id;
  host.seat = created.seat;
  for (const guest of others) {
    const request = { table_id: created.table_id, display_name: guest.name };
    const joined = await call("JoinTable", request, guest.token);
    guest.tableId = created.table_id;
    guest.seat = joined.seat;
  }
  for (let seat = GUESTS; seat < SEATS; seat += 1) {
    await call("AddBot", { table_id: created.table_id }, host.token);
  }
  await call("StartGame", { table_id: created.table_id, command_id: randomUUID() }, host.token);
  const sessions = others.map((guest) => playOnSession(guest, false));
  await Promise.all([playWithCalls(host, true), ...sessions]);
  const final = await call("GetTable", { table_id: created.table_id }, host.token);
  return {
    table_id: created.table_id,
    final_version: Number(final.view.version),
    final_phase: final.view.phase,
    guests: guests.map((guest) => guest.report()),
  };
}

const timer = setTimeout(() => {
  const partial = { timeout_ms: TIMEOUT_MS, guests: guests.map((guest) => guest.report()) };
  process.stdout.write(`${JSON.stringify(partial)}\n`);
  process.exit(2);
}, TIMEOUT_MS);
const report = await main();
clearTimeout(timer);
gateway.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(report.guests.some((guest) => guest.broken !== null) ? 1 : 0);
