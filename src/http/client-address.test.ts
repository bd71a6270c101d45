import { describe, expect, test } from 'vitest';
import { createAddressList } from '../shared/addresses.js';
import { clientAddress } from './client-address.js';

const proxies = createAddressList(['10.0.0.0/8', '::1']);

test('from a trusted proxy, the right-most hop that is not one of them is the client', () => {
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '203.0.113.7' }, proxies)).toBe('203.0.113.7');
  // A client that writes its own header cannot choose: the hop the proxy added is the right-most untrusted one.
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' }, proxies)).toBe('203.0.113.7');
  // Chained proxies are skipped.
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '203.0.113.7, 10.1.1.1' }, proxies)).toBe('203.0.113.7');
  expect(clientAddress('::1', { 'x-forwarded-for': '2001:db8::5' }, proxies)).toBe('2001:db8::5');
  // Ports and brackets, as some proxies write them.
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '[2001:db8::5]:4711' }, proxies)).toBe('2001:db8::5');
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '203.0.113.7:1234' }, proxies)).toBe('203.0.113.7');
});

test('from anyone else, or with nothing usable forwarded, the peer is the client', () => {
  expect(clientAddress('203.0.113.9', { 'x-forwarded-for': '10.0.0.1' }, proxies)).toBe('203.0.113.9');
  expect(clientAddress('10.0.0.2', {}, proxies)).toBe('10.0.0.2');
  // Forwarded is not read: a client's own one would stand beside a proxy that appends only X-Forwarded-For.
  expect(clientAddress('10.0.0.2', { forwarded: 'for=203.0.113.7' }, proxies)).toBe('10.0.0.2');
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': 'unknown' }, proxies)).toBe('10.0.0.2');
  // Garbage ends the walk at the trusted hop before it.
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '203.0.113.7, nonsense, 10.1.1.1' }, proxies)).toBe('10.1.1.1');
  // Every hop trusted: the left-most of them.
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '10.3.3.3, 10.1.1.1' }, proxies)).toBe('10.3.3.3');
  expect(clientAddress('10.0.0.2', { 'x-forwarded-for': '203.0.113.7' }, createAddressList([]))).toBe('10.0.0.2');
});

describe('http.forwardedHeader "forwarded" (RFC 7239)', () => {
  const fwd = (peer: string, value: string | undefined, extra: Record<string, string> = {}) =>
    clientAddress(peer, value === undefined ? extra : { ...extra, forwarded: value }, proxies, 'forwarded');

  test('the for= of the right-most element that is not a trusted proxy is the client', () => {
    expect(fwd('10.0.0.2', 'for=203.0.113.7')).toBe('203.0.113.7');
    expect(fwd('10.0.0.2', 'for=203.0.113.7;proto=https;by=10.0.0.2')).toBe('203.0.113.7');
    expect(fwd('10.0.0.2', 'by=10.0.0.2; For="203.0.113.7:4711"')).toBe('203.0.113.7');
    // Quoted IPv6 with a port and without, as RFC 7239 section 6 writes them.
    expect(fwd('10.0.0.2', 'for="[2001:db8:cafe::17]:4711"')).toBe('2001:db8:cafe::17');
    expect(fwd('::1', 'for="[2001:db8::5]"')).toBe('2001:db8::5');
    // A client's own element stands left of the one its proxy appends; chained proxies are skipped.
    expect(fwd('10.0.0.2', 'for=198.51.100.1, for=203.0.113.7')).toBe('203.0.113.7');
    expect(fwd('10.0.0.2', 'for=203.0.113.7, for=10.1.1.1')).toBe('203.0.113.7');
    // Repeated header lines arrive joined with ", " (src/http/mount.ts copyRequest).
    expect(fwd('10.0.0.2', 'for=198.51.100.1, for="203.0.113.7"')).toBe('203.0.113.7');
  });

  test('unknown, obfuscated, missing or broken for= ends the walk at the trusted hop before it', () => {
    expect(fwd('10.0.0.2', 'for=unknown')).toBe('10.0.0.2');
    expect(fwd('10.0.0.2', 'for=_hidden')).toBe('10.0.0.2');
    expect(fwd('10.0.0.2', 'proto=https')).toBe('10.0.0.2');
    expect(fwd('10.0.0.2', 'for="203.0.113.7')).toBe('10.0.0.2');
    expect(fwd('10.0.0.2', 'for=203.0.113.7, for=_gw, for=10.1.1.1')).toBe('10.1.1.1');
    // An open quote of the client's cannot swallow the element its proxy appended.
    expect(fwd('10.0.0.2', 'for="198.51.100.1, for=203.0.113.7')).toBe('203.0.113.7');
  });

  test('only the named header is read: X-Forwarded-For is ignored, and Forwarded from anyone else', () => {
    expect(fwd('10.0.0.2', undefined, { 'x-forwarded-for': '203.0.113.7' })).toBe('10.0.0.2');
    expect(fwd('10.0.0.2', 'for=203.0.113.7', { 'x-forwarded-for': '198.51.100.1' })).toBe('203.0.113.7');
    expect(fwd('203.0.113.9', 'for=10.0.0.1')).toBe('203.0.113.9');
  });
});
