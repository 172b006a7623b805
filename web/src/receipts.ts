// The receipts the web table keeps of its table (issue 16): the chain hash of every change
// it received, checked to link, and exported in the Python client's file format
// (president.client.receipts, "president-receipts/1"), which `president audit verify
// --receipts FILE` reads. A receipt holds a version, two hashes and an event type: nothing
// the seat could not see. Each also carries the operator's Ed25519 signature, which the
// browser checks against the keys the gateway publishes (GetOperatorKeys), over the bytes
// docs/auditing.md states: "president-receipt/1\n<stream id>\n<version>\n<hash>\n".

import type { OperatorKey, WatchResponse } from "@president/client";

export const FORMAT = "president-receipts/1";

export interface Receipt {
  version: number;
  hash: string;
  previous_hash: string;
  type: string;
  /** The operator's signature, hex (absent: it came unsigned). */
  signature?: string;
  key_id?: string;
}

/** What the signatures of the kept receipts show. */
export interface SignatureCheck {
  signed: number;
  /** Receipts not signed by any published key: the first one's version, if any. */
  unsigned: number;
  firstUnsigned?: number;
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

function fromHex(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(text.length / 2));
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The bytes a receipt's signature covers (docs/auditing.md, president.hosting.signatures). */
export function receiptBytes(tableId: string, version: number, hash: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`president-receipt/1\ntable-${tableId}\n${version}\n${hash}\n`);
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
    if (change.receiptSignature.length) {
      receipt.signature = hex(change.receiptSignature);
      receipt.key_id = change.receiptKeyId;
    }
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

  /** Check every kept receipt's signature (WebCrypto's Ed25519) against the operator's
   * published keys. */
  async checkSignatures(keys: OperatorKey[]): Promise<SignatureCheck> {
    const byId = new Map<string, CryptoKey>();
    for (const key of keys) {
      if (key.algorithm !== "ed25519") continue;
      byId.set(key.keyId, await crypto.subtle.importKey("raw", new Uint8Array(key.publicKey), { name: "Ed25519" }, false, ["verify"]));
    }
    const check: SignatureCheck = { signed: 0, unsigned: 0 };
    for (const receipt of [...this.kept.values()].sort((a, b) => a.version - b.version)) {
      const key = receipt.key_id ? byId.get(receipt.key_id) : undefined;
      const good =
        key !== undefined &&
        receipt.signature?.length === 128 &&
        (await crypto.subtle.verify(
          { name: "Ed25519" },
          key,
          fromHex(receipt.signature),
          receiptBytes(this.tableId, receipt.version, receipt.hash),
        ));
      if (good) {
        check.signed += 1;
      } else {
        check.unsigned += 1;
        check.firstUnsigned ??= receipt.version;
      }
    }
    return check;
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
