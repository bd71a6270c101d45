import { describe, expect, test } from 'vitest';
import { originOf } from './origin.js';

const origin = (host: string | undefined, proto?: string) =>
  originOf({ headers: { ...(host === undefined ? {} : { host }), ...(proto ? { 'x-forwarded-proto': proto } : {}) } });

describe('originOf: the origin a request was sent to, never a Host that is not host[:port]', () => {
  test.each([
    ['box.local:8080', 'http://box.local:8080'],
    ['Box.Local', 'http://box.local'],
    ['192.168.1.20:8080', 'http://192.168.1.20:8080'],
    ['[fe80::1]:8080', 'http://[fe80::1]:8080'],
    ['[::ffff:192.0.2.1]', 'http://[::ffff:192.0.2.1]'],
    ['localhost', 'http://localhost'],
  ])('%s is %s', (host, expected) => {
    expect(origin(host)).toBe(expected);
  });

  test.each([
    [undefined],
    [''],
    ['evil.example/path'],
    ['user@evil.example'],
    ['a b'],
    ['"quoted"'],
    ['box:0'],
    ['box:65536'],
    ['box:80:80'],
    ['[zz::1]'],
    ['[::1'],
    ['256.1.1.1'],
    ['1.2.3'],
    ['-lead.example'],
    ['trail-.example'],
    ['a..b'],
    ['box.local, other.example'],
    [`${'a'.repeat(64)}.example`],
    ['x'.repeat(300)],
  ])('%s is refused', (host) => {
    expect(origin(host)).toBeUndefined();
  });

  test('https only when a proxy says so', () => {
    expect(origin('box', 'https')).toBe('https://box');
    expect(origin('box', 'http')).toBe('http://box');
    // A chain of proxies: the first one's, which the client reached.
    expect(origin('box', 'https, http')).toBe('https://box');
    expect(origin('box', 'HTTPS')).toBe('https://box');
    expect(origin('box', 'javascript')).toBe('http://box');
  });
});
