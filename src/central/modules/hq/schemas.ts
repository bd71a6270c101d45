import { Type } from '@sinclair/typebox';
import { StockDocumentBody } from '../../../shared/sync-messages.js';

/**
 * A stock document at headquarters: the box's document as it was sent (StockDocumentBody's `document`, so fields a
 * newer box adds pass through), the device that sent it, and the ledger rows it booked.
 */
export const StockDocumentDetail = Type.Intersect([
  StockDocumentBody.properties.document,
  Type.Object({
    deviceId: Type.String(),
    ledger: Type.Array(
      Type.Object(
        {
          warehouseId: Type.String(),
          line: Type.Integer({ minimum: 0 }),
          itemId: Type.String(),
          unit: Type.String(),
          delta: Type.Number({ description: "the balance's change in the unit (micro-units converted)" }),
        },
        { additionalProperties: false },
      ),
    ),
  }),
]);
