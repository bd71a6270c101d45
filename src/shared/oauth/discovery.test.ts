import { expect, test } from 'vitest';
import { issuerOf } from './discovery.js';

test("the tenant's issuer", () => {
  expect(issuerOf('http://box:8080', 't')).toBe('http://box:8080/auth-oauth2/tenants/t');
});
