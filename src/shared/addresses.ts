import { BlockList, isIP } from 'node:net';

/**
 * A list of addresses or CIDR ranges: the box's `metrics.allowAddresses` (who may scrape /metrics without a
 * token), the central's `--trusted-proxies` (whose forwarding headers are believed). Node's BlockList compares addresses, not text: `::ffff:10.0.0.5` (an IPv4 client of a dual-stack socket) and
 * uWS's uncompressed IPv6 text match the entries they mean.
 */
export function createAddressList(entries: readonly string[]) {
  const list = new BlockList();
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (!parsed) throw new Error(`not an IP address or CIDR range: ${entry}`);
    if (parsed.prefix === undefined) list.addAddress(parsed.address, parsed.family);
    else list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return {
    /** True when `address` (the peer's IP as text; '' when unknown) is on the list. */
    allows(address: string): boolean {
      if (entries.length === 0) return false;
      const family = isIP(address);
      if (family === 0) return false;
      return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** Why each entry cannot be used (empty: all good), for the check at start; `at` names the list. */
export function addressListProblems(entries: readonly string[], at = '/metrics/allowAddresses'): string[] {
  return entries.flatMap((e, i) => (parseEntry(e) ? [] : [`${at}/${i}: not an IP address or CIDR range: ${e}`]));
}

export type AddressList = ReturnType<typeof createAddressList>;

function parseEntry(entry: string): { address: string; family: 'ipv4' | 'ipv6'; prefix?: number } | undefined {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > (version === 4 ? 32 : 128)) return undefined;
  return { address, family, prefix: Number(prefixText) };
}
