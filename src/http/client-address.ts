import { isIP } from 'node:net';
import type { AddressList } from '../shared/addresses.js';

/**
 * The client's address of a request that reached us from `peer`. From a trusted proxy, `X-Forwarded-For` names
 * the hops, each proxy appending the address it took the request from: walked from the right (the hop nearest
 * us), every trusted proxy is skipped and the first address that is not one is the client. A hop that is not an
 * IP address (`unknown`, garbage) ends the walk at the trusted hop before it, so a client cannot pick an address
 * by writing one. From anyone else the header is ignored: the peer is the client. RFC 7239 `Forwarded` is not
 * read: a proxy that appends only that one would leave a client's own `X-Forwarded-For` standing, and reading
 * either by its presence would let the client choose.
 */
export function clientAddress(peer: string, headers: Record<string, string>, trusted: AddressList): string {
  if (!trusted.allows(peer)) return peer;
  const hops = (headers['x-forwarded-for'] ?? '').split(',').map((h) => bare(h.trim()));
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.allows(hop)) return hop;
  }
  return client;
}

/** `[2001:db8::1]:4711` and `192.0.2.1:4711` without the port; anything else as it is. */
function bare(hop: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (v6) return v6[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1]! : hop;
}
