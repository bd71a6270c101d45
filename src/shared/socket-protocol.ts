import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { COMMAND_ERRORS, type CommandErrorCode, type ErrorDetail } from './errors.js';
import { Order } from './order-schemas.js';

/**
 * The socket's protocol in one file (docs/api.md "The socket"): every frame the box sends, as a TypeBox schema, and
 * the builders that make them. Frames are built only here; /asyncapi.json is generated from these schemas
 * (src/http/contracts/asyncapi.ts), and the integration tests check real frames against that document.
 *
 * A frame is JSON text `{"type", "seq", "payload"}`. The socket is for pushes only: a client that sends a
 * message is closed with 1008.
 */

/** Where the socket is served (`?since=N`, `?venue=V`, `?access_token=` for browsers). */
export const SOCKET_PATH = '/ordering-api/ws';

/** Close codes of the socket (docs/api.md "The socket", "Limits of the socket"). */
export const CLOSE_TOKEN_EXPIRED = 4001;
export const CLOSE_TOO_SLOW = 4008;
export const CLOSE_REPLAY_TOO_LARGE = 4009;
export const CLOSE_MESSAGE_SENT = 1008;
export const CLOSE_STOPPING = 1001;
export const CLOSE_INTERNAL = 1011;
export const TOKEN_EXPIRED_REASON = 'token expired';
/** 4001 too, when the token is revoked while the socket is open (docs/api.md "Token revocation"). */
export const TOKEN_REVOKED_REASON = 'token revoked';
export const USER_RETIRED_REASON = 'user retired';
export const CLIENT_REVOKED_REASON = 'client revoked';
export const TOO_SLOW_REASON = 'too slow: reconnect with ?since=';
export const REPLAY_TOO_LARGE_REASON = 'replay too large: fetch orders by id, reconnect with a newer since';
export const CLOSE_CODES: readonly { code: number; reason: string; meaning: string }[] = [
  {
    code: CLOSE_TOKEN_EXPIRED,
    reason: TOKEN_EXPIRED_REASON,
    meaning: "the token's exp passed: refresh it and reconnect with ?since=",
  },
  {
    code: CLOSE_TOKEN_EXPIRED,
    reason: TOKEN_REVOKED_REASON,
    meaning: "the token's refresh family was revoked (a spent refresh token presented again): sign in again",
  },
  {
    code: CLOSE_TOKEN_EXPIRED,
    reason: USER_RETIRED_REASON,
    meaning: "headquarters retired the token's staff user: the user's tokens no longer work",
  },
  {
    code: CLOSE_TOKEN_EXPIRED,
    reason: CLIENT_REVOKED_REASON,
    meaning: 'headquarters revoked the OAuth client the token was issued to: sign in through a current client',
  },
  {
    code: CLOSE_TOO_SLOW,
    reason: TOO_SLOW_REASON,
    meaning:
      'the reader fell behind (send buffer or unacknowledged bytes past their limits): nothing is lost, reconnect with ?since=',
  },
  {
    code: CLOSE_REPLAY_TOO_LARGE,
    reason: REPLAY_TOO_LARGE_REASON,
    meaning:
      "the replay after ?since= would pass sockets.maxReplayBytes: fetch the orders by id, reconnect with the HELLO's seq",
  },
  { code: CLOSE_MESSAGE_SENT, reason: 'this socket accepts no messages', meaning: 'the client sent a message' },
  { code: CLOSE_STOPPING, reason: 'venue-box is stopping', meaning: 'the box is shutting down' },
  {
    code: CLOSE_INTERNAL,
    reason: 'internal error',
    meaning: 'the box could not read the stream: reconnect with ?since=',
  },
];

const Instant = Type.String({ format: 'date-time' });

export const HelloPayload = Type.Object(
  {
    userId: Type.String(),
    expiresAt: Instant,
    /** Only on a staff venue socket (`?venue=V`). */
    venue: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const NotificationPayload = Type.Object(
  {
    type: Type.Literal('OrderEventError'),
    users: Type.Array(Type.String()),
    orderId: Type.String(),
    event: Type.Object(
      { correlationId: Type.String(), user: Type.String(), orderId: Type.String() },
      { additionalProperties: false },
    ),
    message: Type.String(),
    codes: Type.Array(
      Type.Object(
        {
          code: Type.String({ enum: Object.keys(COMMAND_ERRORS) }),
          message: Type.String(),
          args: Type.Array(Type.String()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);

const PrinterState = Type.String({ enum: ['ok', 'paperNearEnd', 'paperOut', 'offline', 'unknown'] });
export const PrinterStatusPayload = Type.Object(
  {
    printer: Type.String(),
    venue: Type.String(),
    role: Type.String({ enum: ['kitchen', 'counter'] }),
    status: PrinterState,
    previous: PrinterState,
    since: Instant,
    queueDepth: Type.Integer({ minimum: 0 }),
    lastError: Type.Union([
      Type.Object({ reason: Type.String(), message: Type.String(), at: Instant }, { additionalProperties: false }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

export const MenuChangedPayload = Type.Object(
  {
    venue: Type.String(),
    menu: Type.Union([Type.String(), Type.Null()]),
    rev: Type.Integer(),
  },
  { additionalProperties: false },
);

export const OrderTooLargePayload = Type.Object(
  {
    orderId: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

/** Every frame type and its payload; `summary` and `description` go into /asyncapi.json. */
export const FRAMES = {
  HELLO: {
    payload: HelloPayload,
    summary: 'First frame on every socket',
    description:
      "Takes no number of its own: its seq is the position the socket starts after (your since on a reconnect, else the stream's newest event; 0 for none). The first event after it is HELLO.seq + 1.",
  },
  ORDER_CHANGE: {
    payload: Order,
    summary: 'The whole order after a command was applied',
    description:
      'To every user of the order, to the staff member who gave the command, and to the staff sockets of its venues.',
  },
  NOTIFICATION: {
    payload: NotificationPayload,
    summary: 'A queued command was refused',
    description:
      'To the user who sent it, with the command\'s correlationId and the business codes (docs/orders.md "The order lifecycle").',
  },
  ORDER_TOO_LARGE: {
    payload: OrderTooLargePayload,
    summary: 'A frame too large for sockets.maxFrameBytes, replaced',
    description: "Takes the replaced event's own seq; GET the order by id.",
  },
  PRINTER_STATUS: {
    payload: PrinterStatusPayload,
    summary: "A venue's printer changed status (staff venue sockets)",
    description: 'Kept for replay like ORDER_CHANGE; written only on a change of status.',
  },
  MENU_CHANGED: {
    payload: MenuChangedPayload,
    summary: "The central changed the venue's catalogue (staff venue sockets)",
    description: "The venue, its menu or headquarters' sold-out flags changed; fetch the menu again.",
  },
} as const satisfies Record<string, { payload: TSchema; summary: string; description: string }>;

export type FrameType = keyof typeof FRAMES;
/** Frame types kept in the event store for replay (HELLO is never stored; ORDER_TOO_LARGE replaces a stored one). */
export type StoredFrameType = Exclude<FrameType, 'HELLO' | 'ORDER_TOO_LARGE'>;
export type FramePayload<T extends FrameType> = Static<(typeof FRAMES)[T]['payload']>;

/** The schema of a whole frame of one type. */
export const frameSchema = (type: FrameType): TSchema =>
  Type.Object(
    { type: Type.Literal(type), seq: Type.Integer({ minimum: 0 }), payload: FRAMES[type].payload },
    { additionalProperties: false },
  );

/** An event for a stream: its type and its payload as JSON text, built once and appended to each stream. */
export interface StreamEvent {
  type: StoredFrameType;
  payloadJson: string;
}

const event = <T extends StoredFrameType>(type: T, payload: FramePayload<T>): StreamEvent => ({
  type,
  payloadJson: JSON.stringify(payload),
});

/** The wire text of a frame whose payload is JSON already (stored events are kept as their payload's text). */
export const frameText = (type: FrameType, seq: number, payloadJson: string): string =>
  `{"type":"${type}","seq":${seq},"payload":${payloadJson}}`;

export const helloFrame = (seq: number, payload: FramePayload<'HELLO'>): string =>
  frameText('HELLO', seq, JSON.stringify(payload));

/** What replaces a frame over the size limit: `{orderId}` with the replaced frame's seq. */
export const orderTooLargeFrame = (seq: number, orderId: unknown): string =>
  frameText('ORDER_TOO_LARGE', seq, JSON.stringify({ orderId: orderId ?? null }));

/** ORDER_CHANGE: the order serialised once (the same text goes to every stream and is measured for the rate). */
export const orderChange = (orderJson: string): StreamEvent => ({ type: 'ORDER_CHANGE', payloadJson: orderJson });

/** NOTIFICATION of a refused command, to the user who sent it. */
export const notification = (
  cmd: { correlationId: string; userId: string; orderId: string },
  codes: ErrorDetail<CommandErrorCode>[],
): StreamEvent =>
  event('NOTIFICATION', {
    type: 'OrderEventError',
    users: [cmd.userId],
    orderId: cmd.orderId,
    event: { correlationId: cmd.correlationId, user: cmd.userId, orderId: cmd.orderId },
    message: codes.map((c) => c.message).join('; '),
    codes,
  });

export const printerStatus = (payload: FramePayload<'PRINTER_STATUS'>): StreamEvent => event('PRINTER_STATUS', payload);

export const menuChanged = (payload: FramePayload<'MENU_CHANGED'>): StreamEvent => event('MENU_CHANGED', payload);
