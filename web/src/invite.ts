// Invite links: a table's link that seats whoever opens it (#join=<id>: signed in first if
// need be, then JoinTable), shown with a copy button in the table's ? menu.

import { gateway, identity, sentence } from "./api";
import { h } from "./dom";

/** The link that seats its opener at ``tableId``. */
export function inviteLink(tableId: string): string {
  return `${location.origin}${location.pathname}#join=${encodeURIComponent(tableId)}`;
}

/** The table an invite link in the address names ("" when there is none). */
export function invitedTo(): string {
  return new URLSearchParams(location.hash.slice(1)).get("join") ?? "";
}

/** Take a seat at the table the invite names; the refusal in words when there is none. */
export async function acceptInvite(tableId: string): Promise<string> {
  try {
    await gateway.joinTable({ tableId, displayName: identity.name });
    return "";
  } catch (error) {
    return `Could not take a seat at the table you were invited to: ${sentence(error)}`;
  }
}

/** The ? menu's invite panel: the link, read-only and selectable, and a copy button. */
export function invitePanel(tableId: string, visibility: string): HTMLElement {
  if (visibility === "practice") {
    return h(
      "section",
      { id: "invite", "aria-labelledby": "invite-title" },
      h("h2", { id: "invite-title" }, "Invite someone"),
      h("p", {}, "A practice table seats only you and bots: open a public or private table to play with people."),
    );
  }
  const link = inviteLink(tableId);
  const field = h("input", { id: "invite-link", readonly: true, value: link });
  const said = h("p", { id: "invite-status", role: "status" });
  const copy = async (): Promise<void> => {
    field.select();
    try {
      await navigator.clipboard.writeText(link);
      said.textContent = "Copied: send it to the people you want at this table.";
    } catch {
      said.textContent = "This browser did not let the page copy: the link is selected, copy it yourself.";
    }
  };
  return h(
    "section",
    { id: "invite", "aria-labelledby": "invite-title" },
    h("h2", { id: "invite-title" }, "Invite someone"),
    h(
      "p",
      {},
      visibility === "private"
        ? "This table is private: only people with its link (or its id) find it. Whoever opens the link signs in and takes a free seat."
        : "Whoever opens this link signs in and takes a free seat.",
    ),
    h("label", { for: "invite-link" }, "The table's invite link"),
    field,
    h("button", { id: "invite-copy", class: "gold", onclick: () => void copy() }, "Copy the invite link"),
    said,
  );
}
