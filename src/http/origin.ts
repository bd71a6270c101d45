import { isIP } from 'node:net';
import type { HttpRequest } from './types.js';

// A DNS name (labels of letters, digits and inner hyphens), an IPv4 address or a bracketed IPv6 address, then an
// optional port: anything else in Host (spaces, '@', quotes, a path, a second host) is never written into a URL.
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST = new RegExp(`^(?:(${LABEL}(?:\\.${LABEL})*)|\\[([0-9a-f:.]+)\\])(?::(\\d{1,5}))?$`);

/**
 * The request's Host header, lower-cased, when it is a sane `host[:port]`; undefined otherwise. The one check of a
 * Host that goes into an answer: the OAuth metadata's URLs and tokens' `iss` (docs/api.md "OAuth discovery"), the
 * AsyncAPI document's server, the central's enrolment command (docs/sync.md "The headquarters console").
 */
export function hostOf(header: string | undefined): string | undefined {
  const host = (header ?? '').trim().toLowerCase();
  if (host.length > 260) return undefined;
  const match = HOST.exec(host);
  if (!match) return undefined;
  const [, name, v6, port] = match;
  if (v6 !== undefined && isIP(v6) !== 6) return undefined;
  if (name !== undefined && /^[\d.]+$/.test(name) && isIP(name) !== 4) return undefined;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  return host;
}

/**
 * The origin (`http://host[:port]`) a request was sent to, from its Host header; undefined when Host is not a
 * sane host[:port]. The scheme is `https` only when a proxy in front says so with `X-Forwarded-Proto: https`
 * (its first value, for a chain of proxies): the box and the central speak plain HTTP. A client choosing either
 * header only chooses the URLs of its own answer (metadata is public; an `iss` names the origin the client asked
 * at, and the token is the node's either way).
 */
export function originOf(req: Pick<HttpRequest, 'headers'>): string | undefined {
  const host = hostOf(req.headers.host);
  if (host === undefined) return undefined;
  const proto = (req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim().toLowerCase();
  return `${proto === 'https' ? 'https' : 'http'}://${host}`;
}
