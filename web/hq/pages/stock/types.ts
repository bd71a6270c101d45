/** The shapes the stock page reads, each naming its route (docs/sync.md "The central node"; docs/warehouse.md). */

/** GET /hq-api/api/stock?warehouseId=W (qty null: a balance outside the safe range). */
export interface StockBalances {
  warehouse: string;
  items: { id: string; unit: string; qty: number | null; locked: number; available: number | null }[];
}

/** A document as its box returned it (docs/warehouse.md "Warehouse API") plus the box that sent it. */
export interface StockDocument {
  id: string;
  kind: string;
  warehouse: string;
  number: string;
  targetWarehouse?: string;
  created: string;
  user?: string;
  items?: { id: string; unit: string; qty: number; unitPrice?: number; total?: number }[];
  extra?: Record<string, string>;
  deviceId: string;
}

/** GET /hq-api/api/stock-documents?warehouseId=W&after: one page. */
export interface DocumentsPage {
  items: StockDocument[];
  next: string | null;
}

/** GET /hq-api/api/stock-documents/:id (docs/sync.md "API"): the document and its ledger rows. */
export type DocumentWithLedger = StockDocument & {
  ledger: { warehouseId: string; line: number; itemId: string; unit: string; delta: number }[];
};
