// The tables where you hold a seat: the ones this device saw you seated at (localStorage, per
// account, the newest few), each asked again (GetTable) before the lobby offers
// "Return to your seat": the server, not the memory, says whether the seat is still yours.

import type { TableView } from "@president/client/game";
import { gateway, identity } from "./api";

/** How many tables a device remembers per account. */
const KEPT = 20;

function key(): string {
  return `president.seats.${identity.playerId}`;
}

function remembered(): string[] {
  try {
    const ids: unknown = JSON.parse(localStorage.getItem(key()) ?? "[]");
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}

function keep(ids: string[]): void {
  localStorage.setItem(key(), JSON.stringify(ids.slice(0, KEPT)));
}

/** You hold a seat at ``tableId`` (newest first). */
export function seatedAt(tableId: string): void {
  const ids = remembered();
  if (ids[0] !== tableId) keep([tableId, ...ids.filter((id) => id !== tableId)]);
}

/** You gave up your seat at ``tableId``. */
export function leftTable(tableId: string): void {
  keep(remembered().filter((id) => id !== tableId));
}

/** The tables where you hold a seat now, as you see them (forgetting those where you do not). */
export async function yourSeats(): Promise<TableView[]> {
  const views = await Promise.all(
    remembered().map((tableId) =>
      gateway.getTable({ tableId }).then(
        (answer) => answer.view,
        () => undefined, // gone, or not answered now: not offered
      ),
    ),
  );
  const seated = views.filter((view): view is TableView => view !== undefined && view.viewerSeat !== undefined && !view.closed);
  keep(remembered().filter((id) => seated.some((view) => view.tableId === id) || !views.some((view) => view?.tableId === id)));
  return seated;
}
