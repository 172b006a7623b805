// The web table's entry: sign in (or a guest kept on this device, again), then the lobby, a
// table (#table=<id> in the address), a game's replay (#replay=<id>, &game=<n> for a later
// game of the table), your profile (#profile) or the leaderboards (#leaderboard); an invite
// link (#join=<id>) seats you and opens its table.

import { gateway, identity } from "./api";
import { byId, fill } from "./dom";
import { acceptInvite, invitedTo } from "./invite";
import { showLeaderboard } from "./leaderboard";
import { showLobby } from "./lobby";
import { showProfile } from "./profile";
import { showSignIn } from "./signin";
import { ReplayPage } from "./replay";
import { TablePage } from "./table";

let table: TablePage | ReplayPage | null = null;

function tableInAddress(): string {
  return new URLSearchParams(location.hash.slice(1)).get("table") ?? "";
}

function replayInAddress(): { tableId: string; game: number } {
  const address = new URLSearchParams(location.hash.slice(1));
  return { tableId: address.get("replay") ?? "", game: Number(address.get("game")) || 0 };
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
  const invite = invitedTo();
  if (invite) {
    // An invite link: take a seat, then the table (a refusal is said in the lobby).
    const refused = await acceptInvite(invite);
    if (!refused) {
      location.replace(`#table=${encodeURIComponent(invite)}`);
      return;
    }
    history.replaceState(null, "", location.pathname);
    await lobby();
    byId("lobby-status").textContent = refused;
    return;
  }
  const tableId = tableInAddress();
  const replay = replayInAddress();
  const replayId = replay.tableId;
  const toLobby = (): void => {
    location.hash = "";
  };
  if (replayId) {
    table = new ReplayPage(
      replayId,
      () => {
        location.hash = `table=${encodeURIComponent(replayId)}`;
      },
      replay.game,
    );
    void table.open();
  } else if (location.hash === "#profile") {
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
    void lobby();
  }
}

function lobby(): Promise<void> {
  fill(byId("side"));
  return showLobby(
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

window.addEventListener("hashchange", () => void route());
void route();
