/**
 * Plain text as CommonMark that renders as the same text. Twenty keeps a note's or task's body
 * as `bodyV2: {blocknote, markdown}` (RICH_TEXT_V2) and shows it through BlockNote, so text
 * written there is read as Markdown: an email body with "* " or "1. " at a line start, a "#",
 * "<b>" or "[x](y)" would otherwise become a list, a heading, HTML or a link.
 *
 * Every character CommonMark gives a meaning inside a line is backslash-escaped (CommonMark §2.4:
 * any ASCII punctuation may be), and so are the ones that open a block at a line start. Lines
 * keep their breaks (a backslash before the newline is a hard line break, §6.7); blank lines stay
 * paragraph breaks. Leading spaces are dropped: four of them would open a code block.
 */
const inline = /[\\`*_[\]<>|~&!]/g;

export function markdownText(text: string): string {
  const paragraphs = text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n+/);
  return paragraphs
    .map((p) =>
      p
        .split('\n')
        .map(escapeLine)
        .filter((l) => l !== '')
        .join('\\\n'),
    )
    .filter((p) => p !== '')
    .join('\n\n');
}

function escapeLine(line: string): string {
  const s = line.trimStart().replace(inline, '\\$&');
  // Block openers: heading, quote, list item, thematic break / setext underline, ordered item.
  return s.replace(/^([#>+=-])/, '\\$1').replace(/^(\d+)([.)])/, '$1\\$2');
}

/** A line of Markdown with a bold label and an escaped value. */
export function labelled(label: string, value: string): string {
  return `**${label}:** ${markdownText(value)}`;
}
