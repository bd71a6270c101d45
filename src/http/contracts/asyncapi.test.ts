import { expect, test } from 'vitest';
import { asyncApiDocument, DEFAULT_SOCKET_HOST, socketHost } from './asyncapi.js';

test('the server is the Host the document was asked at, when it is a sane host[:port]', () => {
  for (const host of ['box.lan', 'box.lan:8080', '192.168.1.20:8080', '[fd00::7]:8080', 'localhost'])
    expect(socketHost(host)).toBe(host);
  for (const bad of [undefined, '', 'a b', 'x/y', 'x:99999', 'x:', '-x.lan', `${'a'.repeat(64)}.lan`, 'x"y', 'h:1:2'])
    expect(socketHost(bad)).toBe(DEFAULT_SOCKET_HOST);
  const doc = asyncApiDocument({ title: 't', version: '1', description: 'd' }, 'box.lan:8080') as {
    servers: { box: { host: string } };
  };
  expect(doc.servers.box.host).toBe('box.lan:8080');
});
