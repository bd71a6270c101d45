import { expect, test } from 'vitest';
import { addressListProblems, createAddressList } from './addresses.js';

test('addresses and CIDR ranges match the peer however uWS or a dual-stack socket writes it', () => {
  const list = createAddressList(['10.0.0.5', '192.168.1.0/24', 'fd00::/8', '::1']);
  expect(list.allows('10.0.0.5')).toBe(true);
  expect(list.allows('::ffff:10.0.0.5')).toBe(true);
  expect(list.allows('0000:0000:0000:0000:0000:ffff:0a00:0005')).toBe(true);
  expect(list.allows('192.168.1.77')).toBe(true);
  expect(list.allows('fd12:3456::1')).toBe(true);
  expect(list.allows('0000:0000:0000:0000:0000:0000:0000:0001')).toBe(true);
  expect(list.allows('10.0.0.6')).toBe(false);
  expect(list.allows('192.168.2.1')).toBe(false);
  expect(list.allows('fe80::1')).toBe(false);
  expect(list.allows('')).toBe(false);
  expect(list.allows('not an address')).toBe(false);
});

test('an empty list allows nobody', () => {
  expect(createAddressList([]).allows('127.0.0.1')).toBe(false);
});

test('entries that are not addresses or ranges are named with their JSON pointer', () => {
  expect(addressListProblems(['127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/128'])).toEqual([]);
  expect(addressListProblems(['localhost', '10.0.0.0/33', '10.0.0.1/8/8', '1.2.3', '::1/x', ' '])).toEqual([
    '/metrics/allowAddresses/0: not an IP address or CIDR range: localhost',
    '/metrics/allowAddresses/1: not an IP address or CIDR range: 10.0.0.0/33',
    '/metrics/allowAddresses/2: not an IP address or CIDR range: 10.0.0.1/8/8',
    '/metrics/allowAddresses/3: not an IP address or CIDR range: 1.2.3',
    '/metrics/allowAddresses/4: not an IP address or CIDR range: ::1/x',
    '/metrics/allowAddresses/5: not an IP address or CIDR range:  ',
  ]);
  expect(() => createAddressList(['localhost'])).toThrow(/localhost/);
});
