// The web table's entry: sign in (or a guest kept on this device, again), then the lobby, a
// table (#table=<id> in the address) or a game's replay (#replay=<id>).

import { gateway, identity } from "./api";
import { byId, fill } from "./dom";
import { showLobby } from "./lobby";
import { showSignIn } from "./signin";
import { ReplayPage } from "./replay";
import { TablePage } from "./table";

let table: TablePage | ReplayPage | null = null;

function tableInAddress(): string {
  return new URLSearchParams(location.hash.slice(1)).get("table") ?? "";
}

function replayInAddress(): string {
  return new URLSearchParams(location.hash.slice(1)).get("replay") ?? "";
}

async function route(): Promise<void> {
  table?.close();
  table = null;
  // A new tab: the guest this device keeps signs in again (a session of the tab's own).
  if (!identity.token && !(await identity.resume())) {
    showSignIn(() => void route());
    document.body.dataset.ready = "signin";
    return;
  }
  const tableId = tableInAddress();
  const replayId = replayInAddress();
  if (replayId) {
    table = new ReplayPage(replayId, () => {
      location.hash = `table=${encodeURIComponent(replayId)}`;
    });
    void table.open();
  } else if (tableId) {
    table = new TablePage(tableId, () => {
      location.hash = "";
    });
    void table.open();
  } else {
    fill(byId("side"));
    void showLobby(
      (id) => {
        location.hash = `table=${encodeURIComponent(id)}`;
      },
      () => {
        // End the session at the server too; this device forgets it (and its guest) either way.
        void gateway
          .logOut({})
          .catch(() => undefined)
          .finally(() => {
            identity.forget();
            void route();
          });
      },
    );
  }
}

window.addEventListener("hashchange", () => void route());
void route();
