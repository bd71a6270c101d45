import { isIP } from 'node:net';
import type { AddressList } from '../shared/addresses.js';

/**
 * The one header the operator's proxies write (`http.forwardedHeader`, the central's `--forwarded-header`):
 * `x-forwarded-for` (nginx's `$proxy_add_x_forwarded_for`, HAProxy's `option forwardfor`) or RFC 7239
 * `forwarded`. Only that one is read; the other is ignored whoever sends it.
 */
export const FORWARDED_HEADERS = ['x-forwarded-for', 'forwarded'] as const;
export type ForwardedHeader = (typeof FORWARDED_HEADERS)[number];

/**
 * The client's address of a request that reached us from `peer` (docs/api.md "Behind a reverse proxy (nginx)").
 * From a trusted proxy, the forwarding header names the hops, each proxy appending the address it took the
 * request from: walked from the right (the hop nearest us), every trusted proxy is skipped and the first address
 * that is not one is the client. A hop that is not an IP address (`unknown`, an obfuscated `_name`, garbage) ends
 * the walk at the trusted hop before it, so a client cannot pick an address by writing one. From anyone else the
 * headers are ignored: the peer is the client.
 *
 * Only the header the operator names is read, never both and never "whichever is present": a proxy that appends
 * to one leaves a client's own copy of the other standing, and reading either by its presence would let the
 * client choose.
 */
export function clientAddress(
  peer: string,
  headers: Record<string, string>,
  trusted: AddressList,
  header: ForwardedHeader = 'x-forwarded-for',
): string {
  if (!trusted.allows(peer)) return peer;
  const hops = header === 'forwarded' ? forwardedHops(headers.forwarded) : forwardedForHops(headers['x-forwarded-for']);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.allows(hop)) return hop;
  }
  return client;
}

/** `X-Forwarded-For: 203.0.113.7, 10.0.0.1`: one address a hop, with or without a port. */
function forwardedForHops(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((h) => bare(h.trim()));
}

/**
 * RFC 7239: `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`, one element a hop, whose `for`
 * parameter (a token or a quoted string) names whom that hop took the request from. An element without `for`
 * reads as a hop that is not an address, ending the walk there.
 *
 * Split on every comma, quoted or not: a `for` value never holds one, and a client's element with an open quote
 * must not swallow the element its proxy appended after it (a quote-aware split would read
 * `for="1.2.3.4, for=198.51.100.7` as one broken element and drop the proxy's). Whatever a client writes lands
 * left of what the proxies append, where the walk either never looks or stops.
 */
function forwardedHops(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value.split(',').map((element) => {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      return bare(unquote(pair.slice(eq + 1).trim()));
    }
    return '';
  });
}

/** A quoted string's content (RFC 9110 5.6.4, `\` escapes one character); a token as it is. */
function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  if (value.length < 2 || !value.endsWith('"')) return '';
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** `[2001:db8::1]:4711` and `192.0.2.1:4711` without the port; anything else as it is. */
function bare(hop: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (v6) return v6[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1]! : hop;
}

/** Who the proxies in front are, and which header they write (HttpDeps and the socket hub's deps alike). */
export interface ProxyTrust {
  trustedProxies?: AddressList;
  forwardedHeader?: ForwardedHeader;
}

/**
 * Sets a request's `remoteAddress` from the peer to the client (clientAddress), for the HTTP routes and the socket
 * upgrade alike: with no trusted proxies, the peer stays the client.
 */
export function deriveClientAddress(
  req: { remoteAddress: string; headers: Record<string, string> },
  trust: ProxyTrust,
): void {
  if (trust.trustedProxies)
    req.remoteAddress = clientAddress(req.remoteAddress, req.headers, trust.trustedProxies, trust.forwardedHeader);
}
