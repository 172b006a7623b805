// The web table's entry: sign in, then the lobby or a table (#table=<id> in the address).

import { gateway, identity } from "./api";
import { byId, fill } from "./dom";
import { showLobby } from "./lobby";
import { showSignIn } from "./signin";
import { TablePage } from "./table";

let table: TablePage | null = null;

function tableInAddress(): string {
  return new URLSearchParams(location.hash.slice(1)).get("table") ?? "";
}

function route(): void {
  table?.close();
  table = null;
  if (!identity.token) {
    showSignIn(route);
    document.body.dataset.ready = "signin";
    return;
  }
  const tableId = tableInAddress();
  if (tableId) {
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
        // End the session at the server too; the tab forgets it either way.
        void gateway
          .logOut({})
          .catch(() => undefined)
          .finally(() => {
            identity.clear();
            route();
          });
      },
    );
  }
}

window.addEventListener("hashchange", route);
route();
