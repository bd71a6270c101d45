import { isIP } from 'node:net';
import type { AddressList } from '../shared/addresses.js';

/**
 * The client's address of a request that reached us from `peer`. From a trusted proxy, the forwarding headers
 * name the hops (`X-Forwarded-For`, else RFC 7239 `Forwarded: for=`): walked from the right (the hop nearest
 * us), every trusted proxy is skipped and the first address that is not one is the client. A hop that is not
 * an IP address (`unknown`, an obfuscated name, garbage) ends the walk at the trusted hop before it, so a client
 * cannot pick an address by writing one. From anyone else the headers are ignored: the peer is the client.
 */
export function clientAddress(peer: string, headers: Record<string, string>, trusted: AddressList): string {
  if (!trusted.allows(peer)) return peer;
  const hops = forwardedHops(headers);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.allows(hop)) return hop;
  }
  return client;
}

/** The hops of X-Forwarded-For (or of Forwarded's `for=` parameters), leftmost first, ports and brackets gone. */
function forwardedHops(headers: Record<string, string>): string[] {
  const xff = headers['x-forwarded-for'];
  if (xff !== undefined) return xff.split(',').map((h) => bare(h.trim()));
  const forwarded = headers.forwarded;
  if (forwarded === undefined) return [];
  return forwarded.split(',').map((element) => {
    const pair = element
      .split(';')
      .map((p) => p.trim())
      .find((p) => p.toLowerCase().startsWith('for='));
    return pair ? bare(pair.slice(4).replace(/^"(.*)"$/, '$1')) : '';
  });
}

/** `[2001:db8::1]:4711` and `192.0.2.1:4711` without the port; anything else as it is. */
function bare(hop: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (v6) return v6[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1]! : hop;
}
