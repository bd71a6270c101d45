import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);
export const isUuid = (value: string): boolean => UUID.test(value);
