/**
 * Every message a venue box and the central node exchange (docs/sync.md "Sync to the central node"), as TypeBox
 * schemas: each gives the type both sides use (Static), the compiled check both sides run (`SYNC_CHECKS`: the
 * central on what a box sends, the box on what the central answers) and the documentation (the central's
 * /openapi.json names them, src/central/contracts.ts). The framing, hashing and signing are
 * src/shared/sync-protocol.ts.
 *
 * An event body names as required what the box always sends and a reader needs; the Order and the stock document
 * inside are the box's API shapes (src/shared/order-schemas.ts, docs/warehouse.md), of which only the fields the
 * central reads are checked here: other fields travel as sent.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { INBOX_KINDS } from './hq-inbox.js';
import { UpdateReport } from './release-schemas.js';
import { MAX_QTY_MICRO } from './qty.js';
import { UUID_PATTERN } from './types.js';

/** A stream of events: each kind belongs to one. */
export const ENVELOPE_STREAMS = ['order', 'stock', 'soldout', 'inbox'] as const;
export type EnvelopeStream = (typeof ENVELOPE_STREAMS)[number];

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const Id = Type.String({ minLength: 1, maxLength: 64 });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256, 64 lower-case hex digits' });

// ------------------------------------------------------------------------------------------ event bodies

export const OrderChangedBody = Type.Object({
  version: Type.Integer({
    minimum: 1,
    description: '1 for the command that created the order, then one more for each applied command',
  }),
  command: Type.Object(
    {
      correlationId: Type.String(),
      kind: Type.String(),
      userId: Type.String(),
      staff: Type.Boolean(),
      confirmedAt: Type.String(),
    },
    { description: 'the command that changed the order' },
  ),
  order: Type.Object(
    {
      id: Id,
      tenant: Id,
      status: Type.String({ minLength: 1 }),
      // Always sent (the Order's own field); the central lists orders by it (docs/sync.md "Tables": created_at).
      created: Type.String({
        minLength: 1,
        description:
          "when the order was made, on the box's clock (a date-time; a wrong clock is kept as data and the central " +
          'lists the order at the time moved to its own clock: docs/sync.md "Clocks")',
      }),
      buckets: Type.Array(Type.Object({ venue: Id }), { minItems: 1 }),
    },
    {
      description:
        'the Order of the interface (src/shared/order-schemas.ts) without its contact; the fields not named here travel as sent',
    },
  ),
  detail: Type.Object(
    {
      contact: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
      extra: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
      rounds: Count,
      lineRounds: Type.Record(Type.String(), Type.Union([Count, Type.Null()])),
    },
    { description: 'what the Order does not show but a box restored from an old copy needs to rebuild it' },
  ),
});
export type OrderChangedBody = Static<typeof OrderChangedBody>;

// A delta is a box quantity: the box never books more than MAX_QTY_MICRO in one row (src/shared/qty.ts).
const Delta = Type.Integer({ minimum: -MAX_QTY_MICRO, maximum: MAX_QTY_MICRO });
export const LedgerTuple = Type.Tuple(
  [Id, Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }), Id, Type.String({ minLength: 1 }), Delta],
  { description: 'a ledger row: [warehouse, line, item, unit, delta in micro-units]' },
);
export type LedgerTuple = Static<typeof LedgerTuple>;

export const StockDocumentBody = Type.Object({
  document: Type.Object(
    {
      id: Id,
      kind: Type.String({ minLength: 1 }),
      warehouse: Id,
      number: Type.String({ minLength: 1 }),
      targetWarehouse: Type.Optional(Id),
      created: Type.String({ minLength: 1, description: "a date-time on the box's clock (as the order's created)" }),
      user: Type.Optional(Type.String()),
      items: Type.Optional(Type.Array(Type.Unknown())),
      unlockItems: Type.Optional(Type.Boolean()),
      extra: Type.Optional(Type.Record(Type.String(), Type.String())),
    },
    { description: "the document as the box's API returned it (docs/warehouse.md)" },
  ),
  ledger: Type.Array(LedgerTuple),
});
export type StockDocumentBody = Static<typeof StockDocumentBody>;

export const WarehouseChangedBody = Type.Object({ id: Id, name: Type.String({ minLength: 1 }) });
export type WarehouseChangedBody = Static<typeof WarehouseChangedBody>;

export const SoldOutChangedBody = Type.Object({
  venue: Id,
  menu: Type.String(),
  productId: Type.String({ minLength: 1 }),
  locked: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
});
export type SoldOutChangedBody = Static<typeof SoldOutChangedBody>;

/** What a box reports up for each entry headquarters sent it (src/shared/hq-inbox.ts), applied or refused. */
export const InboxResultBody = Type.Object({
  entry: Id,
  kind: literals(INBOX_KINDS),
  status: literals(['applied', 'rejected'] as const),
  /** For a refusal: the codes the box's API would have answered with (venueClosed, insufficientStock, ...). */
  codes: Type.Array(
    Type.Object({
      code: Type.String({ maxLength: 100 }),
      message: Type.String({ maxLength: 2000 }),
      args: Type.Array(Type.String()),
    }),
    { maxItems: 100 },
  ),
});
export type InboxResultBody = Static<typeof InboxResultBody>;

/** Every kind of event a box sends: its stream, its body and what it says. */
export const ENVELOPES = {
  'order.changed': {
    stream: 'order',
    body: OrderChangedBody,
    summary: 'An applied order command: the order as it now is, and the command that changed it',
  },
  'stock.document': {
    stream: 'stock',
    body: StockDocumentBody,
    summary: 'A posted stock document with the ledger rows it wrote',
  },
  'warehouse.changed': {
    stream: 'stock',
    body: WarehouseChangedBody,
    summary: 'A warehouse created or renamed on the box',
  },
  'soldout.changed': { stream: 'soldout', body: SoldOutChangedBody, summary: 'A staff sold-out flag set or cleared' },
  'inbox.result': {
    stream: 'inbox',
    body: InboxResultBody,
    summary: 'An entry headquarters sent down (a document, an order) applied or refused',
  },
} as const satisfies Record<string, { stream: EnvelopeStream; body: TSchema; summary: string }>;
export type EnvelopeKind = keyof typeof ENVELOPES;
export type EnvelopeBodies = { [K in EnvelopeKind]: Static<(typeof ENVELOPES)[K]['body']> };
const KINDS = Object.keys(ENVELOPES) as EnvelopeKind[];
/** Each kind's stream (an envelope's `stream` must be its kind's). */
export const ENVELOPE_KINDS = Object.fromEntries(KINDS.map((k) => [k, ENVELOPES[k].stream])) as {
  [K in EnvelopeKind]: (typeof ENVELOPES)[K]['stream'];
};

/**
 * One event as it travels and is hashed: the exact JSON text is stored in the box's outbox, sent, hashed and
 * kept by the central; nobody re-serialises it. Its position (epoch, seq) is given by the batch header.
 * `boxTime` is the box's clock, kept as data only: order is the sequence, never a clock. The body is checked by
 * its kind's schema (ENVELOPES).
 */
export const Envelope = Type.Object({
  eventId: Type.String({ pattern: UUID_PATTERN }),
  tenant: Id,
  stream: literals(ENVELOPE_STREAMS),
  aggregate: Type.String({ maxLength: 200 }),
  kind: literals(KINDS),
  schema: Type.Integer({ minimum: 1 }),
  boxTime: Type.String(),
  body: Type.Unknown(),
});
export type Envelope<K extends EnvelopeKind = EnvelopeKind> = Omit<Static<typeof Envelope>, 'kind' | 'body'> & {
  kind: K;
  body: EnvelopeBodies[K];
};

// -------------------------------------------------------------------------------------- batch and answers

/**
 * The header of a batch. The device's signature covers the header's exact bytes; `lastHash` is the chain after
 * the batch's events starting from `prevHash`, so the signature covers every event too. Fields a newer protocol
 * adds pass this check: the central answers such a header 426 first (src/central/modules/ingest/frame.ts).
 */
export const BatchHeader = Type.Object({
  protocol: Count,
  schema: Count,
  tenant: Id,
  deviceId: Id,
  keyId: Id,
  epoch: Count,
  firstSeq: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  lastSeq: Count,
  prevHash: Hash,
  lastHash: Hash,
  pendingSeq: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: "the newest seq in the box's outbox when the batch was made: the central reports lag from it",
  }),
  sentAt: Type.String({ minLength: 1, maxLength: 64, description: "the box's clock, as data only" }),
});
export type BatchHeader = Static<typeof BatchHeader>;

/** The central's position for a device: the last event it committed. */
export const Head = Type.Object({ epoch: Count, seq: Count, hash: Hash });
export type Head = Static<typeof Head>;

/** The answer to an accepted batch: the central committed everything up to `ackedSeq`. */
export const BatchAck = Type.Object({
  ackedSeq: Count,
  ackedHash: Hash,
  deadLetters: Type.Array(Type.Object({ seq: Count, eventId: Type.String(), reason: Type.String() }), {
    description: 'events that broke a rule: kept aside by the central, which still advanced past them',
  }),
});
export type BatchAck = Static<typeof BatchAck>;

// The box's clock is data, never refused for skew; +-1e15 ms (about 31,700 years from 1970) only keeps the
// offset inside the central's clock_offset_ms (bigint) and exact as a JSON number.
const BOX_TIME_MS = 1e15;

export const HelloRequest = Type.Object({
  protocol: Count,
  schema: Count,
  boxTimeMs: Type.Number({
    minimum: -BOX_TIME_MS,
    maximum: BOX_TIME_MS,
    description: "the box's clock: the central records the offset, never rejects for it",
  }),
  pendingSeq: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: "the newest seq in the box's outbox",
  }),
  version: Type.String({ maxLength: 100 }),
  /** Absent from boxes before the headquarters console; the central keeps it on its own clock (devices.oldest_pending_at). */
  oldestPendingMs: Type.Optional(
    Type.Union([Type.Number({ minimum: -BOX_TIME_MS, maximum: BOX_TIME_MS }), Type.Null()], {
      description:
        "the box's clock when its oldest event not yet acknowledged by the central was written; null: none pending",
    }),
  ),
  /**
   * The program the box runs and its update state: an UpdateReport (src/shared/release-schemas.ts); absent from boxes
   * before updates. Checked apart from the hello: one this central does not know (a newer box's) is left out.
   */
  update: Type.Optional(Type.Unknown({ description: 'UpdateReport (src/shared/release-schemas.ts)' })),
});
export type HelloRequest = Static<typeof HelloRequest>;

export const HelloResponse = Type.Object({
  head: Head,
  serverTimeMs: Type.Number(),
  protocols: Type.Array(Count),
  schema: Count,
});
export type HelloResponse = Static<typeof HelloResponse>;

export const EnrolRequest = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64 }),
  publicKey: Type.String({ minLength: 1, maxLength: 100, description: "the device's Ed25519 public key, base64" }),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  /** A box enrolling again: the device it was, and that device's key's signature (docs/sync.md "Enrolling again"). */
  previous: Type.Optional(
    Type.Object(
      {
        deviceId: Type.String({ minLength: 1, maxLength: 64 }),
        signature: Type.String({ minLength: 1, maxLength: 100, description: 'base64 Ed25519 signature' }),
      },
      { additionalProperties: false },
    ),
  ),
});
export type EnrolRequest = Static<typeof EnrolRequest>;

export const EnrolResponse = Type.Object({
  deviceId: Type.String(),
  tenant: Type.String(),
  venue: Type.String(),
  keyId: Type.String(),
});
export type EnrolResponse = Static<typeof EnrolResponse>;

/** One stored event of the tail fetch; `envelope` is the exact text the box once sent. */
export const TailEvent = Type.Object({ seq: Count, epoch: Count, hash: Hash, envelope: Type.String() });
export type TailEvent = Static<typeof TailEvent>;

export const TailResponse = Type.Object({
  head: Head,
  events: Type.Array(TailEvent),
  proof: Type.Union([Type.Object({ header: Type.String(), signature: Type.String() }), Type.Null()], {
    description:
      'the header line and signature (base64) of the batch that set the head, exactly as the device sent them; null while the ' +
      "head is seq 0. A box restoring from its central checks its own signature on it: the header's lastHash is the chain over every " +
      'event up to the head, so the central cannot give a box events it never sent',
  }),
});
export type TailResponse = Static<typeof TailResponse>;

// ------------------------------------------------------------------------------------- the standby lease

// docs/sync.md "The standby lease": the central is the witness of a venue's two boxes, which share one device.
const Term = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "the pair's term: one more at each takeover",
});
const Holder = Type.String({ pattern: UUID_PATTERN, description: 'a box id: each box of a pair has its own' });
const LeaseTtl = Type.Integer({ minimum: 1, description: "how long the lease lasts from the central's answer (ms)" });

export const StandbyLeaseRequest = Type.Object({
  holder: Holder,
  term: Term,
  claim: Type.Boolean({
    description: "false: the primary renews its term's lease; true: the standby takes over with its peer's term + 1",
  }),
});
export type StandbyLeaseRequest = Static<typeof StandbyLeaseRequest>;

export const StandbyLeaseGranted = Type.Object({
  granted: Type.Literal(true),
  term: Term,
  holder: Holder,
  ttlMs: LeaseTtl,
});
export type StandbyLeaseGranted = Static<typeof StandbyLeaseGranted>;

/** A refused lease: the API's error body (code `conflict`) with the lease the central holds now. */
export const StandbyLeaseRefused = Type.Object({
  granted: Type.Literal(false),
  term: Term,
  holder: Holder,
  ttlMs: LeaseTtl,
  message: Type.String(),
  codes: Type.Array(Type.Object({ code: Type.String(), message: Type.String(), args: Type.Array(Type.String()) })),
});
export type StandbyLeaseRefused = Static<typeof StandbyLeaseRefused>;

/** A central's refusal: the API's error body; a 409 also carries `expectedSeq` and `head`, so the box knows where to resume. */
export const SyncErrorBody = Type.Object({
  message: Type.String(),
  codes: Type.Array(Type.Object({ code: Type.String(), message: Type.String(), args: Type.Array(Type.String()) })),
  expectedSeq: Type.Optional(Count),
  head: Type.Optional(Head),
});
export type SyncErrorBody = Static<typeof SyncErrorBody>;

/** The compiled checks: the central's on what a box sends, the box's on what the central answers. */
export const SYNC_CHECKS = {
  envelope: TypeCompiler.Compile(Envelope),
  header: TypeCompiler.Compile(BatchHeader),
  head: TypeCompiler.Compile(Head),
  ack: TypeCompiler.Compile(BatchAck),
  hello: TypeCompiler.Compile(HelloResponse),
  tail: TypeCompiler.Compile(TailResponse),
  leaseGranted: TypeCompiler.Compile(StandbyLeaseGranted),
  leaseRefused: TypeCompiler.Compile(StandbyLeaseRefused),
  body: Object.fromEntries(KINDS.map((k) => [k, TypeCompiler.Compile(ENVELOPES[k].body)])) as {
    [K in EnvelopeKind]: ReturnType<typeof TypeCompiler.Compile<(typeof ENVELOPES)[K]['body']>>;
  },
};

/** The first failure of a compiled check as one short line (`/path: message`), or undefined when the value passes. */
export function problemOf(
  check: { Check(v: unknown): boolean; Errors(v: unknown): { First(): { path: string; message: string } | undefined } },
  value: unknown,
): string | undefined {
  if (check.Check(value)) return undefined;
  const e = check.Errors(value).First();
  return `${e?.path || '/'}: ${e?.message ?? 'invalid'}`;
}

/** The schemas a reader of the protocol needs, by name, for the central's /openapi.json. */
export const SYNC_SCHEMAS: Record<string, TSchema> = {
  SyncEnvelope: Envelope,
  BatchHeader,
  BatchAck,
  SyncHead: Head,
  HelloRequest,
  UpdateReport,
  HelloResponse,
  EnrolRequest,
  EnrolResponse,
  TailResponse,
  StandbyLeaseRequest,
  StandbyLeaseGranted,
  StandbyLeaseRefused,
  ...Object.fromEntries(
    KINDS.map((k) => [
      `Event_${k.replace('.', '_')}`,
      Type.Object(
        {
          ...Envelope.properties,
          kind: Type.Literal(k),
          stream: Type.Literal(ENVELOPES[k].stream),
          body: ENVELOPES[k].body,
        },
        { description: ENVELOPES[k].summary },
      ),
    ]),
  ),
};
