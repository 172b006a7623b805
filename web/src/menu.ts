// The table's ? menu: the preset's rules, the activity panel (GetActivity), Check the deal
// (re-created in this browser), the receipts to export, and an invite link.

import { gateway, sentence } from "./api";
import { checkRound, witnessTable } from "./dealcheck";
import { fill, h } from "./dom";
import { invitePanel } from "./invite";
import { PRESETS, ruleLines } from "./rules";
import { seatName, withCardFaces } from "./seats";
import type { TablePage } from "./table";

function rulesPanel(page: TablePage): HTMLElement {
  const preset = page.view?.options?.preset ?? "classic";
  const rules = PRESETS[preset];
  const options = Object.entries(page.view?.options?.options ?? {});
  return h(
    "section",
    { id: "rules", "aria-labelledby": "rules-title" },
    h("h2", { id: "rules-title" }, `The rules: ${preset} (${rules?.players ?? "?"} players)`),
    h("ul", {}, ...ruleLines(preset, page.view?.options?.options ?? {}).map((line) => h("li", {}, ...withCardFaces(line)))),
    options.length ? h("p", {}, "This table's options: ", ...withCardFaces(options.map(([k, v]) => `${k}=${v}`).join(", "))) : null,
  );
}

async function activityPanel(page: TablePage, into: HTMLElement): Promise<void> {
  const list = h("ol", { id: "activity-items" });
  const older = h("button", { id: "activity-older", hidden: true }, "Show older");
  fill(
    into,
    h("section", { id: "activity", "aria-labelledby": "activity-title" }, h("h2", { id: "activity-title" }, "What happened at the table, newest first"), list, older),
  );
  let token = "";
  const more = async (): Promise<void> => {
    try {
      const answer = await gateway.getActivity({ tableId: page.tableId, pageSize: 50, pageToken: token });
      list.append(...answer.items.map((item) => h("li", { "data-version": String(item.version) }, ...withCardFaces(item.text))));
      token = answer.nextPageToken;
      older.hidden = !token;
    } catch (error) {
      list.append(h("li", { role: "alert" }, `The activity is not available: ${sentence(error)}`));
    }
  };
  older.addEventListener("click", () => void more());
  await more();
}

async function dealPanel(page: TablePage, into: HTMLElement): Promise<void> {
  const status = h("p", { id: "check-status", role: "status" }, "Reading the table's log as your seat sees it…");
  const results = h("ul", { id: "check-results" });
  const secret = h("input", { id: "check-secret", autocomplete: "off", spellcheck: false, placeholder: "64 hex digits" });
  const rounds = h("div", { id: "check-rounds", role: "group", "aria-label": "Finished rounds" });
  const section = h(
    "section",
    { id: "deal-check", "aria-labelledby": "deal-check-title" },
    h("h2", { id: "deal-check-title" }, "Check the deal"),
    h("p", {}, "Your browser re-creates a finished round's deal from its revealed secret and compares it with what your seat saw: the fingerprint shown before the deal, the hand you were dealt, and your exchange."),
    rounds,
    h("label", { for: "check-secret" }, "Check against a secret someone gave you instead (optional)"),
    secret,
    status,
    results,
  );
  fill(into, section);
  try {
    const witness = await witnessTable(page.tableId, page.view?.viewerSeat ?? null);
    const finished = [...witness.rounds.values()].filter((round) => round.secretHex || round.secretLost);
    if (finished.length === 0) {
      status.textContent = "No round has been revealed yet: a round's secret comes at its end.";
      return;
    }
    status.textContent = "Choose a round to check.";
    fill(
      rounds,
      ...finished.map((round) => {
        const [game, number] = round.key.split("/");
        return h(
          "button",
          {
            "data-round": round.key,
            onclick: async () => {
              const named = (seat: number): string => (page.view ? seatName(page.view, seat) : `seat ${seat}`);
              const verdict = await checkRound(witness, round.key, named, secret.value.trim());
              fill(results, ...verdict.checks.map((check) => h("li", { class: check.ok ? "ok" : "bad" }, check.ok ? "✔ " : "✘ ", ...withCardFaces(check.text))));
              status.textContent = verdict.ok
                ? `Round ${number} of game ${game} checks out: this browser re-created its deal from the secret.`
                : verdict.lost
                  ? `Round ${number} of game ${game} cannot be checked: the operator lost its secret.`
                  : `Round ${number} of game ${game} does NOT check out: see what did not agree below.`;
              status.className = verdict.ok ? "verdict-ok" : "verdict-bad";
              section.dataset.verdict = verdict.ok ? "ok" : verdict.lost ? "lost" : "bad";
            },
          },
          `Check round ${number}${game === "1" ? "" : ` of game ${game}`}`,
        );
      }),
    );
  } catch (error) {
    status.textContent = `The check could not run: ${sentence(error)}`;
    section.dataset.verdict = "error";
  }
}

function receiptsPanel(page: TablePage): HTMLElement {
  const conflicts = page.receipts.conflicts.length;
  const signatures = h("p", { id: "receipts-signatures", "aria-live": "polite" }, "Checking the operator's signatures …");
  const panel = h(
    "section",
    { id: "receipts", "aria-labelledby": "receipts-title" },
    h("h2", { id: "receipts-title" }, "Your receipts"),
    h(
      "p",
      { id: "receipts-count" },
      `This browser kept ${page.receipts.size} receipt(s) of this table: the chain hash of every change it received. `,
      conflicts ? `${conflicts} of them do not link up: keep the file and show it to an auditor.` : "They all link up.",
    ),
    signatures,
    h("p", {}, "An auditor checks the stored game against them with president audit verify --receipts FILE --operator-key KEY."),
    h("button", { id: "export-receipts", onclick: () => page.receipts.download() }, "Export the receipts"),
  );
  void checkSignatures(page, signatures);
  return panel;
}

/** Say whether the operator signed every kept receipt, with the key it publishes. */
async function checkSignatures(page: TablePage, out: HTMLElement): Promise<void> {
  try {
    const { keys } = await gateway.getOperatorKeys({});
    const check = await page.receipts.checkSignatures(keys);
    const ids = keys.map((key) => key.keyId).join(", ") || "none";
    if (check.unsigned === 0) {
      out.textContent = `All ${check.signed} are signed by the operator's key (${ids}): they show the operator issued them.`;
      out.dataset.verdict = "ok";
    } else {
      out.textContent =
        `${check.unsigned} receipt(s), the first of version ${check.firstUnsigned}, were not signed by the operator's key (${ids}): ` +
        "they prove nothing. Keep the file and show it to an auditor.";
      out.dataset.verdict = "bad";
    }
  } catch (error) {
    out.textContent = `The signatures could not be checked: ${sentence(error)}`;
    out.dataset.verdict = "error";
  }
}

export function helpMenu(page: TablePage): HTMLElement {
  const panel = h("div", { id: "panel" });
  const open = (name: string, show: () => void) =>
    h("button", { "data-key": `menu-${name}`, id: `menu-${name}`, "aria-controls": "panel", onclick: show }, name.replace(/-/g, " "));
  return h(
    "nav",
    { id: "menu", "aria-label": "The table's ? menu" },
    h(
      "div",
      { class: "menu-buttons" },
      h("span", { class: "menu-mark", "aria-hidden": "true" }, "?"),
      open("rules", () => fill(panel, rulesPanel(page))),
      open("activity", () => void activityPanel(page, panel)),
      open("check-the-deal", () => void dealPanel(page, panel)),
      open("receipts", () => fill(panel, receiptsPanel(page))),
      open("invite", () => fill(panel, invitePanel(page.tableId, page.view?.visibility ?? ""))),
    ),
    panel,
  );
}
