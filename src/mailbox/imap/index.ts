/**
 * IMAP, one verb per file (imapflow's lib/commands/ layout), on imapflow's client:
 *   connect.ts             connectImap / withImap: sign in (password or XOAUTH2), always close
 *   special-folders.ts     findFolder / findSpecialFolders: Sent, Junk, Trash by SPECIAL-USE, then by name
 *   find-by-message-id.ts  findByMessageId: UID SEARCH HEADER Message-ID, exact matches only
 *   append-to-sent.ts      appendToSent: APPEND the sent bytes to Sent, \Seen, dated when sent
 *   search-recent-mail.ts  searchRecentMail: the sender's mailbox last look (NOOP, UID SEARCH FROM/HEADER, FETCH)
 *   list-sent-since.ts     listSentSince: the Sent folder since an instant (UID SEARCH SINCE, FETCH), for reconcile-sent
 *   warm-connection.ts     WarmImap: one connection kept open between uses, replaced once when the server dropped it
 *   message-key.ts         imapMessageKey / parseImapMessageKey: 'INBOX:<uidvalidity>:<uid>', the sync's key of a copy
 *   open-message.ts        withMessage: SELECT a key's folder, check its UIDVALIDITY and UID, act on it
 *   move-message.ts        moveMessage: UID MOVE (RFC 6851; COPY + \Deleted + EXPUNGE without MOVE)
 *   add-flags.ts           addFlags: UID STORE +FLAGS (\Flagged, \Seen)
 *   test-connection.ts     testConnection: sign in to IMAP and SMTP, capabilities, folders, a typed problem per failure
 *   connection-problem.ts  classifyConnectionError: dns, unreachable, timeout, tls, auth_failed, imap_disabled, protocol
 * The sync connector on top of these (pull, IDLE watch) is mailbox/sync/imap-sync.ts; the SMTP/IMAP
 * mailbox connector (connectors/smtp-imap/) puts them together with SMTP.
 */
export type { FolderRole, ImapAccount, ImapTimeouts, MailAuth } from './account.ts';
export { defaultImapTimeouts, imapFlowOptions } from './account.ts';
export { connectImap, withImap } from './connect.ts';
export { chooseFolder, findFolder, findSpecialFolders, type ListedFolder } from './special-folders.ts';
export { findByMessageId, type FoundMessage } from './find-by-message-id.ts';
export { appendToSent, type AppendedCopy } from './append-to-sent.ts';
export { searchRecentMail } from './search-recent-mail.ts';
export { listSentSince } from './list-sent-since.ts';
export { WarmImap, type WarmImapOptions } from './warm-connection.ts';
export { imapMessageKey, parseImapMessageKey, type ImapMessageAt } from './message-key.ts';
export { withMessage } from './open-message.ts';
export { moveMessage } from './move-message.ts';
export { addFlags } from './add-flags.ts';
export { assertMessageId, sameMessageId } from './message-id.ts';
export { testConnection, testImap, testSmtp, type ConnectionReport, type ConnectionTestInput, type ImapCheck, type SmtpCheck } from './test-connection.ts';
export { classifyConnectionError, type ConnectionProblem, type ConnectionProblemKind } from './connection-problem.ts';
