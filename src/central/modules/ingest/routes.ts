import { json, type Reply, type Route } from '../../../http/types.js';
import { AppError, errorBody } from '../../../shared/errors.js';
import { BATCH_MEDIA_TYPE, PATHS } from '../../../shared/sync-protocol.js';
import { Type } from '@sinclair/typebox';
import { BatchAck, SyncErrorBody } from '../../../shared/sync-messages.js';
import { type createIngestService, SyncConflict } from './service.js';

const BatchText = Type.String({
  description:
    'newline-delimited: line 1 the header (#/components/schemas/BatchHeader, its exact bytes signed), line 2 the ' +
    "device's Ed25519 signature of it (base64), then one event a line (#/components/schemas/SyncEnvelope)",
});

/** POST a batch: the body's bytes untouched ('raw'), since the signature covers them as sent. */
export function ingestRoutes(ingest: ReturnType<typeof createIngestService>): Route[] {
  return [
    {
      method: 'post',
      path: PATHS.batches,
      auth: 'none',
      body: 'raw',
      // Documents the bytes; frame.ts reads them (the header by its schema, BatchHeader) with bounded work.
      schema: { body: BatchText },
      doc: {
        operationId: 'postBatch',
        summary: 'A batch of events from a box, signed by it',
        tag: 'sync-api',
        responses: {
          200: { description: 'committed up to ackedSeq', schema: BatchAck },
          409: { description: 'syncGap or syncDiverged: resume from expectedSeq and head', schema: SyncErrorBody },
          426: { description: 'unsupportedProtocol: a protocol or schema this central does not know' },
          429: {
            description: 'tooManyRequests: too many batches at once, or one of this device in flight',
            headers: ['Retry-After'],
          },
        },
      },
      async handle({ req, body }): Promise<Reply> {
        // Exactly the batch media type, parameters allowed (`; charset=utf-8`); not a prefix such as `...FOO`.
        const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
        if (type !== BATCH_MEDIA_TYPE) {
          throw AppError.of('unsupportedMediaType', `a batch is ${BATCH_MEDIA_TYPE}`);
        }
        try {
          return json(200, await ingest.ingest(body as Buffer));
        } catch (err) {
          // The box resumes from expectedSeq and head, which the catalog's error body has no place for.
          if (err instanceof SyncConflict) {
            const conflict: SyncErrorBody = { ...errorBody(err), expectedSeq: err.expectedSeq, head: err.head };
            return json(409, conflict);
          }
          throw err;
        }
      },
    },
  ];
}
