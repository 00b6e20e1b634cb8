import { refuseCapture } from './pcap.ts';

/**
 * rtpengine's metadata file for one recorded call (`recording-method = pcap`, rtpengine(8)
 * "--recording-dir"): the pcap's path on the first line, then each SDP rtpengine sent ("SDP mode:
 * offer" towards the callee, "answer" back to the caller), the start and end times, and last the
 * generic metadata the signalling passed in the offer (Kamailio's `metadata=` flag). Pure.
 *
 * The file is named `rtpengine-meta-<Call-ID>-<16 hex>.txt` and the pcap `<Call-ID>-<16 hex>.pcap`:
 * the SIP Call-ID is read from the name, as rtpengine writes it nowhere else.
 */
export interface CallMetadata {
  /** The SIP Call-ID of the recorded call. */
  callId: string;
  /** The pcap's file name (no folder: the ingester only opens files in its own spool). */
  pcapName: string;
  /**
   * rtpengine's own media ports by whom they receive from: what the callee sends goes to the port
   * in the offer rtpengine made to the callee, what the caller sends to the one in the answer
   * rtpengine gave back to the caller. Ports, not addresses: one call's ports are distinct, and an
   * IPv6 address is written differently in SDP and in the capture.
   */
  fromCaller: number[];
  fromCallee: number[];
  /** Cadenza's generic metadata: the authenticated rep who placed the call (Kamailio's $fU). */
  rep: string | null;
}

const NAME = /^rtpengine-meta-(.+)-([0-9a-f]{16})\.txt$/;

/** The Call-ID and the pcap's name from a metadata file's name, or null when it is not one. */
export function metadataFileName(name: string): { callId: string; pcapName: string } | null {
  const m = NAME.exec(name);
  if (!m) return null;
  // rtpengine percent-encodes the Call-ID in file names ('@' as %40).
  let callId: string;
  try {
    callId = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  return { callId, pcapName: `${m[1]}-${m[2]}.pcap` };
}

export function parseMetadata(fileName: string, text: string): CallMetadata {
  const named = metadataFileName(fileName);
  if (!named) throw refuseCapture('metadata', `${JSON.stringify(fileName)} is not the name of an rtpengine metadata file.`);
  if (text.length > 1_000_000) throw refuseCapture('metadata', 'The metadata file is larger than any call writes.', { bytes: text.length });
  const lines = text.split(/\r?\n/);
  const fromCaller: number[] = [];
  const fromCallee: number[] = [];
  let mode: 'offer' | 'answer' | null = null;
  let rep: string | null = null;
  for (const line of lines) {
    const sdpMode = /^SDP mode: (offer|answer)$/.exec(line);
    if (sdpMode) {
      mode = sdpMode[1] as 'offer' | 'answer';
      continue;
    }
    const m = /^m=audio (\d+) /.exec(line);
    if (m && mode !== null && Number(m[1]) > 0) {
      // rtpengine's offer goes to the callee, who sends to it; its answer goes back to the caller.
      (mode === 'offer' ? fromCallee : fromCaller).push(Number(m[1]));
      continue;
    }
    const r = /^cadenza-rep:([A-Za-z0-9._-]{1,128})$/.exec(line.trim());
    if (r) rep = r[1]!;
  }
  if (fromCaller.length === 0 || fromCallee.length === 0) throw refuseCapture('metadata', 'The metadata names no audio stream for one side of the call (no offer or no answer SDP).', { callId: named.callId });
  return { ...named, fromCaller: [...new Set(fromCaller)], fromCallee: [...new Set(fromCallee)], rep };
}
