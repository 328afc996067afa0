/** The same request as the playground sends, written for a terminal and for the openai clients. */

/** POSIX shell single quotes: a `'` inside becomes `'\''`. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function curlSnippet(origin: string, body: object): string {
  return [
    `curl -N ${shellQuote(`${origin}/v1/chat/completions`)} \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join('\n');
}

export function openaiJsSnippet(origin: string, body: object): string {
  return [
    `import OpenAI from 'openai';`,
    ``,
    `const client = new OpenAI({ baseURL: ${JSON.stringify(`${origin}/v1`)}, apiKey: 'none' });`,
    `const stream = await client.chat.completions.create(${JSON.stringify(body, null, 2)});`,
    `for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`,
  ].join('\n');
}

/** svc's own request fields (docs/spaces.md): the Python client takes them only through `extra_body`. */
const EXTENSION_FIELDS = ['spaces', 'retrieval'];

/** Python's literals differ from JSON's only in true/false/null, which json.loads handles. */
export function openaiPythonSnippet(origin: string, body: object): string {
  const extensions = EXTENSION_FIELDS.filter((field) => Object.hasOwn(body, field));
  return [
    `import json`,
    `from openai import OpenAI`,
    ``,
    `client = OpenAI(base_url=${JSON.stringify(`${origin}/v1`)}, api_key="none")`,
    `request = json.loads(${JSON.stringify(JSON.stringify(body))})`,
    ...(extensions.length === 0
      ? [`for chunk in client.chat.completions.create(**request):`]
      : [
          `extra_body = {key: request.pop(key) for key in ${JSON.stringify(extensions)}}`,
          `for chunk in client.chat.completions.create(**request, extra_body=extra_body):`,
        ]),
    `    if chunk.choices and chunk.choices[0].delta.content:`,
    `        print(chunk.choices[0].delta.content, end="", flush=True)`,
  ].join('\n');
}
