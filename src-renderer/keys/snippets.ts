/** Copy-ready client code pointing at this server. */

export interface SnippetInput {
  /** `http://127.0.0.1:7780/v1` */
  baseUrl: string;
  model: string;
  /** The key to show; a placeholder unless one was just created. */
  apiKey: string;
}

export type SnippetKind = "curl" | "python" | "langchain";

const pyString = (s: string) => JSON.stringify(s);

export function snippet(kind: SnippetKind, { baseUrl, model, apiKey }: SnippetInput): string {
  switch (kind) {
    case "curl":
      return [
        `curl ${baseUrl}/chat/completions \\`,
        `  -H "Authorization: Bearer ${apiKey}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '${JSON.stringify({ model, messages: [{ role: "user", content: "Hello" }] })}'`,
      ].join("\n");
    case "python":
      return [
        "from openai import OpenAI",
        "",
        `client = OpenAI(base_url=${pyString(baseUrl)}, api_key=${pyString(apiKey)})`,
        "reply = client.chat.completions.create(",
        `    model=${pyString(model)},`,
        '    messages=[{"role": "user", "content": "Hello"}],',
        ")",
        "print(reply.choices[0].message.content)",
      ].join("\n");
    case "langchain":
      return [
        "from langchain_openai import ChatOpenAI",
        "",
        `llm = ChatOpenAI(base_url=${pyString(baseUrl)}, api_key=${pyString(apiKey)}, model=${pyString(model)})`,
        'print(llm.invoke("Hello").content)',
      ].join("\n");
  }
}
