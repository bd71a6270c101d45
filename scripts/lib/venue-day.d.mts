export function staffToken(baseUrl: string): Promise<{ access_token: string; UUID: string }>;
export function driveVenueDay(
  baseUrl: string,
  options: { orders: number; documents: number; warehouses: [string, string] | string[]; concurrency?: number },
): Promise<{ commands: number; documents: number }>;
