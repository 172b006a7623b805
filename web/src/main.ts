// The web table's entry: sign in (or a guest kept on this device, again), then the lobby or a
// table (#table=<id> in the address), your profile (#profile) or the leaderboards (#leaderboard).

import { gateway, identity } from "./api";
import { byId, fill } from "./dom";
import { showLeaderboard } from "./leaderboard";
import { showLobby } from "./lobby";
import { showProfile } from "./profile";
import { showSignIn } from "./signin";
import { TablePage } from "./table";

let table: TablePage | null = null;

function tableInAddress(): string {
  return new URLSearchParams(location.hash.slice(1)).get("table") ?? "";
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
  const toLobby = (): void => {
    location.hash = "";
  };
  if (location.hash === "#profile") {
    fill(byId("side"));
    void showProfile(toLobby, () => {
      location.hash = "leaderboard";
    });
  } else if (location.hash === "#leaderboard") {
    fill(byId("side"));
    void showLeaderboard(toLobby, () => {
      location.hash = "profile";
    });
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
