// The lobby: the tables where you hold a seat (to return to), the public tables (preset, host,
// phase, free seats) to join or watch, quick play (QuickPlay: the server picks the table), a
// table opened by its id, and a new practice, public or private table with the preset's options.

import { create } from "@bufbuild/protobuf";
import { TableOptionsSchema, type TableView } from "@president/client/game";
import { type TableSummary, Visibility } from "@president/client";
import { commandId, gateway, identity, sentence } from "./api";
import { byId, fill, h, panelForm } from "./dom";
import { NewTableOptions } from "./newtable";
import { guideOffered, guideTable } from "./guide";
import { PRESETS } from "./rules";
import { withCardFaces } from "./seats";
import { yourSeats } from "./yourseats";

const PHASES: Record<string, string> = {
  lobby: "waiting for players",
  playing: "playing",
  between_rounds: "between rounds",
  game_over: "game over",
};

function returnButton(tableId: string, title: string, open: (id: string) => void): HTMLElement {
  return h("button", { class: "gold", onclick: () => open(tableId), "aria-label": `Return to your seat at ${title}` }, "Return to your seat");
}

function tableRow(table: TableSummary, open: (id: string) => void, status: HTMLElement, yours: boolean): HTMLElement {
  const title = table.name || `Table ${table.tableId}`;
  const join = async (): Promise<void> => {
    try {
      await gateway.joinTable({ tableId: table.tableId, displayName: identity.name });
      open(table.tableId);
    } catch (error) {
      status.textContent = `Could not join ${title}: ${sentence(error)}`;
    }
  };
  const watch = async (): Promise<void> => {
    try {
      await gateway.spectate({ tableId: table.tableId });
      open(table.tableId);
    } catch (error) {
      status.textContent = `Could not watch ${title}: ${sentence(error)}`;
    }
  };
  return h(
    "li",
    { class: "table-row", "data-table": table.tableId },
    h("span", { class: "table-name" }, title),
    h("span", {}, `${table.preset || table.options?.preset || "classic"}`),
    h("span", {}, `host ${table.hostName || "—"}`),
    h("span", {}, PHASES[table.phase] ?? table.phase),
    h("span", {}, `${table.freeSeats} of ${table.seatCount} seats free`),
    yours ? returnButton(table.tableId, title, open) : null,
    !yours && table.freeSeats > 0 && table.phase !== "game_over"
      ? h("button", { onclick: join, "aria-label": `Join ${title}` }, "Join")
      : null,
    yours ? null : h("button", { onclick: watch, "aria-label": `Watch ${title}` }, "Watch"),
  );
}

/** A table where you hold a seat (public, private or practice; ``name`` when the lobby lists it). */
function yourRow(view: TableView, name: string, open: (id: string) => void): HTMLElement {
  const title = name || `Table ${view.tableId}`;
  return h(
    "li",
    { class: "table-row", "data-table": view.tableId },
    h("span", { class: "table-name" }, title),
    h("span", {}, `${view.options?.preset ?? ""} · ${view.visibility}`),
    h("span", {}, PHASES[view.phase] ?? (view.phase === "round" ? "playing" : view.phase)),
    returnButton(view.tableId, title, open),
  );
}

export async function showLobby(open: (id: string) => void, signOut: () => void): Promise<void> {
  const status = h("p", { id: "lobby-status", role: "status" }, "Asking the server for the tables…");
  const list = h("ul", { id: "lobby-tables", "aria-labelledby": "tables-title" });
  const yoursList = h("ul", { id: "your-tables", "aria-labelledby": "your-title" });
  const yours = h("section", { "aria-labelledby": "your-title", class: "card-panel", id: "your-seats", hidden: true }, h("h2", { id: "your-title" }, "Your seats"), yoursList);

  const preset = h("select", { id: "new-preset" }, ...Object.keys(PRESETS).map((name) => h("option", { value: name }, name)));
  const visibility = h(
    "select",
    { id: "new-visibility" },
    h("option", { value: String(Visibility.PRACTICE) }, "practice (you and bots)"),
    h("option", { value: String(Visibility.PUBLIC) }, "public (in the lobby)"),
    h("option", { value: String(Visibility.PRIVATE) }, "private (joined by its id)"),
  );
  const name = h("input", { id: "new-name", maxlength: 40 });
  const seats = h("input", { id: "new-seats", type: "number", min: 0, max: 8, value: 0 });
  const options = new NewTableOptions();
  const presetNote = h("p", { id: "new-preset-note", class: "note" });
  const showPreset = (): void => {
    fill(presetNote, ...withCardFaces(PRESETS[preset.value]?.summary ?? ""));
    options.showPreset(preset.value);
  };
  const guided = h("input", { id: "new-guided", type: "checkbox", checked: guideOffered() });
  const showVisibility = (): void => {
    const practice = Number(visibility.value) === Visibility.PRACTICE;
    options.showPractice(practice);
    guided.disabled = !practice;
  };
  preset.addEventListener("change", showPreset);
  visibility.addEventListener("change", showVisibility);
  showPreset();
  showVisibility();
  const form = panelForm(
    "create",
    "Create a table",
    [
      ["Rules (preset)", preset],
      presetNote,
      ["Who may sit", visibility],
      ["Table name (optional)", name],
      ["Seats (0 for the preset's usual count)", seats],
      h("label", { class: "inline", for: "new-guided" }, guided, "Guided first game (practice): the page explains each step of round 1"),
      ...options.fields(),
    ],
    h("button", { type: "submit", class: "gold" }, "Create the table"),
    async () => {
      try {
        const created = await gateway.createTable({
          options: create(TableOptionsSchema, { preset: preset.value, options: options.read() }),
          seatCount: Number(seats.value) || 0,
          visibility: Number(visibility.value) as Visibility,
          displayName: identity.name,
          name: name.value.trim(),
          commandId: commandId(),
        });
        if (guided.checked && !guided.disabled) guideTable(created.tableId);
        open(created.tableId);
      } catch (error) {
        fill(status, ...withCardFaces(`Could not create the table: ${sentence(error)}`));
      }
    },
  );

  const quickPreset = h("select", { id: "quick-preset" }, ...Object.keys(PRESETS).map((name) => h("option", { value: name }, name)));
  const quickForm = panelForm(
    "quick",
    "Quick play",
    [
      h("p", { class: "note" }, "A seat at the public table of this preset that is closest to starting, or a new one if none has a seat free."),
      ["Preset for quick play", quickPreset],
    ],
    h("button", { type: "submit", class: "gold" }, "Play now"),
    async () => {
      try {
        const seated = await gateway.quickPlay({ preset: quickPreset.value, displayName: identity.name });
        open(seated.tableId);
      } catch (error) {
        fill(status, ...withCardFaces(`Quick play did not find you a seat: ${sentence(error)}`));
      }
    },
  );

  const byIdInput = h("input", { id: "open-id", required: true });
  const openForm = panelForm(
    "open",
    "A table by its id",
    [["Table id (a private table's host gives it)", byIdInput]],
    h("button", { type: "submit" }, "Open"),
    () => open(byIdInput.value.trim()),
  );

  fill(
    byId("main"),
    h(
      "header",
      { class: "bar" },
      h("h1", {}, "President: the lobby"),
      h("span", {}, `Signed in as ${identity.name}`),
      h("a", { href: "#profile", class: "button" }, "Your profile"),
      h("a", { href: "#leaderboard", class: "button" }, "Leaderboards"),
      h("button", { onclick: signOut }, "Sign out"),
    ),
    yours,
    h(
      "div",
      { class: "columns" },
      h(
        "section",
        { "aria-labelledby": "tables-title", class: "card-panel" },
        h("h2", { id: "tables-title" }, "Open tables"),
        h("button", { onclick: () => void showLobby(open, signOut) }, "Refresh"),
        list,
      ),
      quickForm,
      form,
      openForm,
    ),
    status,
  );
  try {
    const [answer, seated] = await Promise.all([gateway.listTables({ inProgress: true }), yourSeats()]);
    const mine = new Set(seated.map((view) => view.tableId));
    fill(list, ...answer.tables.map((table) => tableRow(table, open, status, mine.has(table.tableId))));
    const names = new Map(answer.tables.map((table) => [table.tableId, table.name]));
    fill(yoursList, ...seated.map((view) => yourRow(view, names.get(view.tableId) ?? "", open)));
    yours.hidden = seated.length === 0;
    status.textContent = answer.tables.length === 0 ? "No open table right now: create one." : `${answer.tables.length} open table(s).`;
  } catch (error) {
    status.textContent = `The lobby is not available: ${sentence(error)}`;
  }
  document.body.dataset.ready = "lobby";
}
