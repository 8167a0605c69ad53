// Checks webhook bodies with the chat vendors' own code: reads {"slack": [body…], "teams": [body…]} on
// stdin, prints {"slack": [[problem…]…], "teams": [[problem…]…]} (one list per body, empty when it passes).
//
// Slack: each body is type-checked by the TypeScript compiler as an object literal of Slack's own types
// (@slack/webhook's IncomingWebhookSendArguments, with `text` and `blocks` of @slack/types' KnownBlock
// required): a wrong block type, a misspelt or misplaced field, a wrong text object is a compile error.
// Teams: the card is parsed by Microsoft's Adaptive Cards library (the renderer Teams is built on), which
// reports unknown element and action types and invalid values; a property the library drops when it
// serialises the card again is one Teams would ignore, and is reported too.
// Markdown: {"markdown": [text…]} is rendered by markdown-it, the Markdown processor Microsoft's Adaptive
// Cards SDK documents for rendering TextBlocks (AdaptiveCard.onProcessMarkdown), and answered as HTML.
import { createRequire } from "node:module";
import ts from "typescript";

const require = createRequire(import.meta.url);
// The UMD build: the package's ES modules import without file extensions, which Node refuses.
const AC = require("adaptivecards/dist/adaptivecards.js");
const MarkdownIt = require("markdown-it");

// Never written: the compiler host hands it over. Placed here so that its imports resolve from this
// folder's node_modules.
const HERE = new URL(".", import.meta.url).pathname;
const FILE = `${HERE}bodies.ts`;

function slackProblems(bodies) {
  const lines = [
    'import type { IncomingWebhookSendArguments } from "@slack/webhook";',
    'import type { KnownBlock } from "@slack/types";',
    "type Checked = IncomingWebhookSendArguments & { text: string; blocks: KnownBlock[] };",
  ];
  const starts = bodies.map((body, i) => {
    const at = lines.length;
    lines.push(`export const body${i}: Checked = ${JSON.stringify(body, null, 1)};`);
    return at;
  });
  const source = lines.join("\n");
  const options = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: [], skipLibCheck: true };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    name === FILE ? ts.createSourceFile(FILE, source, version) : read(name, version);
  host.fileExists = ((exists) => (name) => name === FILE || exists(name))(host.fileExists.bind(host));
  const program = ts.createProgram({ rootNames: [FILE], options, host });
  const found = bodies.map(() => []);
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
    if (diagnostic.file?.fileName !== FILE) {
      found.forEach((list) => list.push(message));
      continue;
    }
    const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line;
    const index = starts.findLastIndex((start) => start <= line);
    (found[index] ?? found[0]).push(message);
  }
  return found;
}

// Keys of `given` (the card as sent) that the library's own serialisation lost: unknown to it.
function dropped(given, kept, path, out) {
  if (Array.isArray(given)) {
    given.forEach((item, i) => dropped(item, Array.isArray(kept) ? kept[i] : undefined, `${path}[${i}]`, out));
  } else if (given && typeof given === "object") {
    for (const [key, value] of Object.entries(given)) {
      if (key === "$schema") continue; // not part of the card: editors read it
      if (!kept || typeof kept !== "object" || !(key in kept)) out.push(`${path}.${key} is not an Adaptive Card property`);
      else dropped(value, kept[key], `${path}.${key}`, out);
    }
  }
  return out;
}

function teamsProblems(card) {
  const problems = [];
  const parsed = new AC.AdaptiveCard();
  const context = new AC.SerializationContext();
  parsed.parse(card, context);
  for (let i = 0; i < context.eventCount; i++) problems.push(context.getEventAt(i).message);
  for (const issue of parsed.validateProperties().validationEvents) problems.push(issue.message);
  return dropped(card, parsed.toJSON(new AC.SerializationContext()), "card", problems);
}

const input = JSON.parse(await new Response(process.stdin).text());
const answer = {
  slack: (input.slack ?? []).length ? slackProblems(input.slack) : [],
  teams: (input.teams ?? []).map((body) => teamsProblems(body.attachments?.[0]?.content ?? {})),
};
if (input.markdown) {
  const md = new MarkdownIt();
  answer.markdown = input.markdown.map((text) => md.render(text));
}
process.stdout.write(JSON.stringify(answer));
