/**
 * format=flowed (RFC 3676) decoding that respects quote depth. postal-mime 4.0.0 joins a flowed
 * line with the next one whatever their quote depths, so Thunderbird's "> Hi \nHello" (a quoted
 * line, then the answer) becomes "> Hi Hello" and the answer is lost inside the quote. §4.5: lines
 * of different quote depth are never joined. Quoted lines are written back as "> " + content.
 */
export function decodeFlowed(str: string, delSp: boolean): string {
  const out: string[] = [];
  let cur: string | null = null;
  let curDepth = 0;
  let curFlowed = false;
  for (const raw of str.split(/\r?\n/)) {
    let depth = 0;
    while (raw[depth] === '>') depth++;
    let body = raw.slice(depth);
    if (body.startsWith(' ')) body = body.slice(1); // space-stuffing (§4.4)
    const flowed = body.endsWith(' ') && body !== '-- ';
    if (cur !== null && curFlowed && depth === curDepth) {
      cur = (delSp ? cur.slice(0, -1) : cur) + body;
    } else {
      if (cur !== null) out.push(prefix(curDepth) + cur);
      cur = body;
      curDepth = depth;
    }
    curFlowed = flowed;
  }
  if (cur !== null) out.push(prefix(curDepth) + cur);
  return out.join('\n');
}

function prefix(depth: number): string {
  return depth === 0 ? '' : `${'>'.repeat(depth)} `;
}
