export function binaryArch(file: string): string;
export function emulatorFor(arch: string): { command?: string; env?: Record<string, string>; missing?: string } | null;
