/**
 * The human-readable pages of the two contracts (/docs/api, /docs/socket): plain HTML rendered here from the
 * same documents the box serves as JSON, with no script and nothing fetched from elsewhere (a venue's LAN may
 * have no internet).
 */

type Json = Record<string, unknown>;

const escapeHtml = (text: unknown): string =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const schemaBlock = (schema: unknown): string => `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`;

function page(title: string, intro: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.2rem}h3{margin:1.6rem 0 .3rem}
code,pre{font:13px/1.35 ui-monospace,monospace}pre{background:#f5f5f4;padding:.6rem;overflow:auto;max-height:24rem}
.m{display:inline-block;min-width:4.2rem;font-weight:700;text-transform:uppercase}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}
details{margin:.3rem 0}summary{cursor:pointer}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${intro}</p>
${body}
</body></html>
`;
}

/**
 * An operation's own `security`, as words: none (`[]`), or its alternatives (`bearer (write)`, `clientBasic`,
 * `none` for `{}`). Without its own, the document's bearer token applies and nothing is said.
 */
function whoMayCall(security: unknown): string {
  if (!Array.isArray(security)) return '';
  if (security.length === 0) return ' <i>(no token)</i>';
  const alternatives = security.map((requirement: Record<string, string[]>) => {
    const schemes = Object.entries(requirement).map(([name, roles]) =>
      roles.length ? `${name} (${roles.join(', ')})` : name,
    );
    return schemes.length ? schemes.join(' and ') : 'none';
  });
  return ` <i>(${escapeHtml(alternatives.join(', or '))})</i>`;
}

/** /docs/api: every operation of the OpenAPI document, grouped by tag, with its parameters, body and answers. */
export function renderOpenApiHtml(doc: Json): string {
  const info = doc.info as Json;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters as Json[] | undefined) ?? [];
      const request = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const responses = Object.entries(op.responses as Record<string, Json>)
        .map(([status, r]) => {
          const content = r.content as Record<string, Json> | undefined;
          const [type, media] = Object.entries(content ?? {})[0] ?? [];
          return (
            `<details><summary><b>${escapeHtml(status)}</b> ${escapeHtml(r.description)}${type ? ` <code>${escapeHtml(type)}</code>` : ''}</summary>` +
            `${media ? schemaBlock(media.schema) : ''}</details>`
          );
        })
        .join('');
      const html = `<h3 id="${escapeHtml(op.operationId)}"><span class="m">${escapeHtml(method)}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary)}${op.description ? ` ${escapeHtml(op.description)}` : ''}${whoMayCall(op.security)}</p>
${
  params.length
    ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${params
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(p.name)}</code> ${escapeHtml(p.description ?? '')}</td><td>${escapeHtml(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
        )
        .join('')}</table>`
    : ''
}
${
  request
    ? Object.entries(request)
        .map(
          ([type, media]) =>
            `<details><summary>body <code>${escapeHtml(type)}</code></summary>${schemaBlock(media.schema)}</details>`,
        )
        .join('')
    : ''
}
${responses}`;
      const tag = ((op.tags as string[] | undefined) ?? ['other'])[0]!;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const sections = [...byTag].map(([tag, ops]) => `<h2>${escapeHtml(tag)}</h2>\n${ops.join('\n')}`).join('\n');
  return page(
    `${info.title} ${info.version}: HTTP API`,
    `${escapeHtml(info.description)} Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(doc.openapi)}). The socket: <a href="/docs/socket">/docs/socket</a>.`,
    sections,
  );
}

/** /docs/socket: the socket's channel and every frame of the AsyncAPI document with its schema. */
export function renderAsyncApiHtml(doc: Json): string {
  const info = doc.info as Json;
  const channels = Object.values(doc.channels as Record<string, Json>)
    .map((c) => {
      const binding = ((c.bindings as Json | undefined)?.ws as Json | undefined) ?? {};
      return `<h2>Channel <code>${escapeHtml(c.address)}</code></h2><p>${escapeHtml(c.description)}</p>
<details><summary>query</summary>${schemaBlock(binding.query)}</details>`;
    })
    .join('\n');
  const messages = Object.values((doc.components as Json).messages as Record<string, Json>)
    .map(
      (m) =>
        `<h3 id="${escapeHtml(m.name)}"><code>${escapeHtml(m.name)}</code></h3><p>${escapeHtml(m.summary)}. ${escapeHtml(m.description)}</p>${schemaBlock(m.payload)}`,
    )
    .join('\n');
  const description = String(info.description).split('\n').map(escape).join('<br>');
  return page(
    `${info.title} ${info.version}: the socket`,
    `${description}<br>Machine-readable: <a href="/asyncapi.json">/asyncapi.json</a> (AsyncAPI ${escapeHtml(doc.asyncapi)}). The HTTP API: <a href="/docs/api">/docs/api</a>.`,
    `${channels}\n<h2>Frames (box to client)</h2>\n${messages}`,
  );
}
