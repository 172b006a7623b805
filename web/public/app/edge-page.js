// The edge's test page: the open tables (ListTables), and "Check the deal" for a seat.
//
// With #table=<id>&token=<access token>&round=<n>[&game=<n>][&secret=<hex>] it reads
// the Watch stream of the seat that account holds at the table, from the table's start
// (what the seat saw: the fingerprint and deal order before the deal, its hand, its
// exchange, then the revealed secret),
// re-creates the round in this browser and says what it checked. A secret in the
// address replaces the revealed one (to check a secret someone gave you).

import { checkSeatDeal } from "../lib/check.js";
import { call, stream } from "../lib/connect.js";
import { DealWitness } from "../lib/events.js";

const $ = (id) => document.getElementById(id);

function item(text, className) {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

async function showLobby() {
  try {
    const answer = await call("ListTables");
    const tables = answer.tables ?? [];
    $("lobby-status").textContent =
      tables.length === 0 ? "No open table right now." : `${tables.length} open table(s).`;
    for (const table of tables) {
      const preset = table.options?.preset ?? "classic";
      $("lobby-tables").append(
        item(`Table ${table.tableId}: ${preset}, ${table.seated ?? 0} of ${table.seatCount} seats taken`),
      );
    }
  } catch (error) {
    $("lobby-status").textContent = `The lobby is not available: ${error.message}`;
  }
}

async function checkDeal(params) {
  const section = $("check-results").parentElement;
  const key = `${params.get("game") ?? "1"}/${params.get("round")}`;
  $("check-status").textContent = `Reading what your seat saw of round ${params.get("round")}…`;
  let witness = null;
  let found = null;
  await stream("Watch", { tableId: params.get("table"), fromVersion: "1" }, params.get("token"), (change) => {
    witness ??= new DealWitness(change.view?.viewerSeat ?? null); // null: a spectator
    if (witness.see(change) === key) found = witness.rounds.get(key);
    return found !== null;
  });
  if (!found) {
    $("check-status").textContent = "That round has not ended yet: its secret comes at its end.";
    return;
  }
  const secretHex = params.get("secret") ?? found.secretHex;
  const result = await checkSeatDeal({ ...found, seat: witness.seat, secretHex });
  for (const check of result.checks) $("check-results").append(item(check.text, check.ok ? "ok" : "bad"));
  $("check-status").textContent = result.ok
    ? "The deal checks out: this browser re-created it from the secret."
    : "The deal does NOT check out: see what did not agree below.";
  $("check-status").className = result.ok ? "verdict-ok" : "verdict-bad";
  section.dataset.verdict = result.ok ? "ok" : "bad";
}

async function main() {
  await showLobby();
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("token") && params.get("round")) {
    try {
      await checkDeal(params);
    } catch (error) {
      $("check-status").textContent = `The check could not run: ${error.message}`;
      $("check-results").parentElement.dataset.verdict = "error";
    }
  }
  document.body.dataset.ready = "true";
}

main();
