import type { BytesSealer } from '../mailbox/vault.ts';
import { transcriptContext, type StoredTranscript } from '../dialer/transcribe/queue.ts';
import type { ClaimedActivity } from './sql/activities.ts';

/**
 * A call activity's recording link and transcript (docs/crm.md "Activities out"), read when the
 * writer claims it (0056_crm_call_media.sql holds the activity until they are there, bounded).
 *
 * The link is to the lead's page in Cadenza, at the call: the recording itself stays in Cadenza
 * behind its sign-in and workspace check, never in the CRM. The transcript goes as text, speaker
 * by speaker, since a rep reading the CRM's timeline wants the conversation, not a link to it.
 */
export interface CallMedia {
  recordingUrl?: string;
  transcript?: string;
}

/** A CRM's text field holds tens of KB at most (Salesforce's Description 32 KB): the transcript is cut to this, saying so. */
export const MAX_TRANSCRIPT_CHARS = 20_000;

const SPEAKER = { rep: 'Rep', prospect: 'Prospect' } as const;

/** The conversation as lines "Rep: …" / "Prospect: …", cut at a turn's end when it is too long. Pure. */
export function transcriptText(t: Pick<StoredTranscript, 'turns'>, max = MAX_TRANSCRIPT_CHARS): string {
  const cut = '\n[… the rest of the transcript is in Cadenza]';
  let out = '';
  for (const turn of t.turns) {
    const line = `${SPEAKER[turn.speaker] ?? turn.speaker}: ${turn.text}\n`;
    if (out.length + line.length > max - cut.length) return out.trimEnd() + cut;
    out += line;
  }
  return out.trimEnd();
}

/** Where a signed-in member plays the call's recording: the lead's page, at the call. Pure. */
export const recordingLink = (publicUrl: string, leadId: string, callId: string): string => `${publicUrl.replace(/\/+$/, '')}/leads/${encodeURIComponent(leadId)}#call-${encodeURIComponent(callId)}`;

export function callMediaReader(o: { publicUrl: string; sealer: Pick<BytesSealer, 'openBytes'> }) {
  return async (row: ClaimedActivity): Promise<CallMedia> => {
    const callId = typeof row.payload.callId === 'string' ? row.payload.callId : undefined;
    if (row.kind !== 'call' || !callId) return {};
    const media: CallMedia = {};
    if (row.recorded && row.lead_id) media.recordingUrl = recordingLink(o.publicUrl, row.lead_id, callId);
    if (row.transcript) {
      const t = JSON.parse((await o.sealer.openBytes(row.workspace_id, transcriptContext(callId), row.transcript)).toString('utf8')) as StoredTranscript;
      const text = transcriptText(t);
      if (text) media.transcript = text;
    }
    return media;
  };
}
