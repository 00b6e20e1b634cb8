/**
 * The new text of a reply: what the sender wrote, without the quoted history and the signature.
 */
export interface ReplyText {
  text: string;
  quoted: string;
  signature: string | null;
}

export function extractReplyText(input: { text?: string | null; html?: string | null; from?: string | null }): ReplyText {
  const body = (input.text ?? '').replace(/\r\n?/g, '\n');
  const lines = body.split('\n');
  let cut = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^\s*>/.test(l) || /^On .*wrote:\s*$/.test(l) || /^-+\s*Original Message\s*-+/i.test(l)) {
      cut = i;
      break;
    }
  }
  const head = lines.slice(0, cut);
  let sig: string | null = null;
  const sigAt = head.findIndex((l) => l === '-- ' || l === '--');
  let newLines = head;
  if (sigAt >= 0) {
    sig = head.slice(sigAt + 1).join('\n').trim();
    newLines = head.slice(0, sigAt);
  }
  return { text: newLines.join('\n').trim(), quoted: lines.slice(cut).join('\n'), signature: sig };
}
