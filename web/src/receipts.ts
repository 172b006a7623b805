// The receipts the web table keeps of its table (issue 16): the chain hash of every change
// it received, checked to link, and exported in the Python client's file format
// (president.client.receipts, "president-receipts/1"), which `president audit verify
// --receipts FILE` reads. A receipt holds a version, two hashes and an event type: nothing
// the seat could not see.

import type { WatchResponse } from "../gen/president/gateway/v1/gateway_pb";

export const FORMAT = "president-receipts/1";

export interface Receipt {
  version: number;
  hash: string;
  previous_hash: string;
  type: string;
}

export class TableReceipts {
  private readonly kept = new Map<number, Receipt>();
  /** Pairs of receipts that do not agree (a version seen with two hashes, or a broken link). */
  readonly conflicts: [Receipt, Receipt][] = [];

  constructor(
    readonly tableId: string,
    readonly holder: string,
  ) {}

  get size(): number {
    return this.kept.size;
  }

  keep(change: WatchResponse): void {
    const version = Number(change.version);
    if (!change.receiptHash || version <= 0) return;
    const receipt: Receipt = {
      version,
      hash: change.receiptHash,
      previous_hash: change.receiptPreviousHash,
      type: change.event?.type ?? "",
    };
    const known = this.kept.get(version);
    if (known) {
      if (known.hash !== receipt.hash) this.conflicts.push([known, receipt]);
      return;
    }
    const before = this.kept.get(version - 1);
    if (before && receipt.previous_hash && receipt.previous_hash !== before.hash) this.conflicts.push([before, receipt]);
    const after = this.kept.get(version + 1);
    if (after && after.previous_hash && after.previous_hash !== receipt.hash) this.conflicts.push([receipt, after]);
    this.kept.set(version, receipt);
  }

  toJson(): object {
    return {
      format: FORMAT,
      table_id: this.tableId,
      holder: this.holder,
      receipts: [...this.kept.values()].sort((a, b) => a.version - b.version),
    };
  }

  /** Offer the receipts as a file download (receipts-<table>.json). */
  download(): void {
    const blob = new Blob([`${JSON.stringify(this.toJson(), null, 1)}\n`], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `receipts-${this.tableId}.json`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  }
}
