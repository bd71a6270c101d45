import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { uws } from '../native/uws.js';
import { ProcessError } from '../shared/errors.js';
import type { HttpRequest } from './types.js';

/** A listening socket of the box or the central, and the port it took (the real one when asked for port 0). */
export interface Listening {
  socket: us_listen_socket;
  port: number;
  /** Stops accepting connections; open ones are the caller's to close. */
  close(): void;
}

/**
 * Listens on host:port; a port in use or an address not there is a ProcessError 'unavailable' (exit 69, one line,
 * docs/operations.md "Exit codes"), which systemd retries: the port may be free by the next start.
 */
export function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  const uWS = uws();
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(
          new ProcessError('unavailable', `cannot listen on ${host}:${port} (port in use, or address not available)`),
        );
        return;
      }
      resolve({ socket, port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}

/** The token of an `Authorization: Bearer ...` header (RFC 6750 2.1), or undefined. */
export const bearerOf = (req: HttpRequest): string | undefined =>
  /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
