// The table's chat: the messages as they arrive on the Watch stream (a live log a screen
// reader reads out), after those of the table's last changes before the page opened
// (GetActivity's newest page), and, for a seated player, a labelled field to write one
// (SendChat).
// A refusal (muted by the host, too fast, a text the rule refuses) is shown in words beside
// the field; a seat the view shows muted is told so at once, and sends nothing the server
// would refuse (SEAT_MUTED). Spectators read the chat; only seated players write. A message is text only:
// it is put in the page as text, never as markup.

import { fromBinary } from "@bufbuild/protobuf";
import { ChatPostedSchema } from "@president/client/events";
import { commandId, gateway, reasonOf, sentence } from "./api";
import { h } from "./dom";

/** The longest message the server takes (CHAT_MAX in hosting/input_rules.py). */
const CHAT_MAX = 200;
/** The messages kept on the page, the newest last. */
const KEPT = 100;
/** How far back the chat looks when the page opens: the table's last changes. */
const EARLIER_CHANGES = 100;
const MUTED = "The host muted you: your messages are not shown to the table.";

export class ChatPanel {
  private readonly items = h("ol", { id: "chat-items" });
  private readonly log = h("div", { id: "chat-log", role: "log", "aria-live": "polite", "aria-label": "Chat messages" }, this.items);
  private readonly field = h("input", { id: "chat-text", name: "chat-text", maxlength: CHAT_MAX, autocomplete: "off" });
  private readonly refusal = h("p", { id: "chat-refusal", role: "alert" });
  private readonly write = h(
    "form",
    { id: "chat-form", class: "inline-form" },
    h("label", { for: "chat-text" }, "Message to the table"),
    this.field,
    h("button", { id: "chat-send", type: "submit" }, "Send"),
  );
  private readonly readOnly = h("p", { id: "chat-read-only", class: "note" }, "Spectators read the chat; only seated players write.");
  private seated = false;
  private muted = false;
  /** The panel, drawn once and kept: the field keeps its text and focus while the table changes. */
  readonly element = h(
    "section",
    { id: "chat", class: "card-panel", "aria-labelledby": "chat-title" },
    h("h2", { id: "chat-title" }, "Chat"),
    this.log,
    this.readOnly,
  );

  constructor(private readonly tableId: string) {
    this.write.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.send();
    });
  }

  /** Whether the viewer holds a seat (only then the field is shown), and the host muted it. */
  seat(seated: boolean, muted: boolean): void {
    if (muted !== this.muted) {
      this.muted = muted;
      this.refuse(muted ? "SEAT_MUTED" : "", muted ? MUTED : "");
    }
    if (seated === this.seated) return;
    this.seated = seated;
    if (seated) this.readOnly.replaceWith(this.write, this.refusal);
    else {
      this.write.remove();
      this.refusal.remove();
      this.log.after(this.readOnly);
    }
  }

  /** A message arrived: ``who`` wrote ``text``. */
  add(who: string, text: string): void {
    this.items.append(this.line(who, text));
    while (this.items.children.length > KEPT) this.items.firstElementChild?.remove();
    this.log.scrollTop = this.log.scrollHeight;
  }

  /** The messages of the table's last changes up to version ``upTo`` (the stream brings the
   * later ones), put before those already shown; ``name`` says who sits in a seat. */
  async earlier(upTo: bigint, name: (seat: number) => string): Promise<void> {
    let page;
    try {
      page = await gateway.getActivity({ tableId: this.tableId, pageSize: EARLIER_CHANGES });
    } catch {
      return; // the live messages still come: the earlier ones are only a courtesy
    }
    const said = page.items
      .filter((item) => item.version <= upTo && item.event?.type.endsWith(".ChatPosted"))
      .reverse()
      .map((item) => fromBinary(ChatPostedSchema, item.event?.payload ?? new Uint8Array()))
      .map((posted) => this.line(name(posted.seat), posted.text));
    this.items.prepend(...said);
  }

  /** A line from the table itself (the host muted someone), set apart from the messages. */
  note(text: string): void {
    this.items.append(h("li", { class: "chat-note" }, text));
  }

  private line(who: string, text: string): HTMLElement {
    return h("li", {}, h("span", { class: "chat-who" }, `${who}: `), text);
  }

  private async send(): Promise<void> {
    const text = this.field.value.trim();
    if (!text) return;
    if (this.muted) {
      this.refuse("SEAT_MUTED", MUTED);
      return;
    }
    try {
      await gateway.sendChat({ tableId: this.tableId, text, commandId: commandId() });
      this.field.value = "";
      this.refuse("", "");
    } catch (error) {
      const reason = reasonOf(error);
      const words = reason === "SEAT_MUTED" ? MUTED : reason === "CHAT_RATE" ? `Too fast: ${sentence(error)}` : `Not sent: ${sentence(error)}`;
      this.refuse(reason, words);
    }
  }

  private refuse(reason: string, words: string): void {
    this.refusal.textContent = words;
    this.refusal.dataset.reason = reason;
  }
}
