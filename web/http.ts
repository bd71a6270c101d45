/**
 * fetch for the web apps (the box's screens and the headquarters console): any non-2xx answer becomes an ApiError
 * carrying the server's own message and codes (docs/api.md "Errors"), so a screen shows what the server said.
 */
export interface ApiProblem {
  code: string;
  message: string;
  args?: string[];
}

/** A refused or failed call: `message` is the box's own (or, without an answer, says the box is unreachable). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly codes: ApiProblem[] = [],
  ) {
    super(message);
  }
}

export const UNREACHABLE = 'unreachable';

/** fetch, with any non-2xx answer turned into an ApiError carrying the box's message. */
export async function send(path: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, { ...init, cache: 'no-store' });
  } catch {
    throw new ApiError(UNREACHABLE, 0);
  }
  if (res.ok) return res;
  let message = `HTTP ${res.status}`;
  let codes: ApiProblem[] = [];
  try {
    const body = (await res.json()) as {
      message?: string;
      codes?: ApiProblem[];
      error?: string;
      error_description?: string;
    };
    message = body.message ?? body.error_description ?? body.error ?? message;
    codes = body.codes ?? (body.error ? [{ code: body.error, message }] : []);
    // The codes name the field or line (`/items/0/qty`): shown with the message when they add to it.
    const details = codes.map((c) => c.message).filter((m) => m && m !== message);
    if (details.length > 0) message = `${message}: ${details.join('; ')}`;
  } catch {
    // not JSON: keep the status
  }
  throw new ApiError(message, res.status, codes);
}
