/**
 * One language's corpus of ordinary business small talk: templates in the spin language
 * (../spin.ts), each part of a mail drawn from its own list. A template keeps its fixed runs short
 * (a choice every two or three words) so that no phrase of four words recurs across many mails:
 * a phrase that does would be a fingerprint a filter could learn.
 */
export interface Corpus {
  lang: string;
  /** Shared synonym sets, referenced as <name>. */
  lexicon: Record<string, string>;
  subjects: string[];
  /** With [to]: the receiver's first name. */
  greetings: string[];
  openers: string[];
  topics: string[];
  questions: string[];
  closings: string[];
  /** With [from]: the sender's first name, on its own line after a "\n". */
  signoffs: string[];
  replyOpeners: string[];
  replyTopics: string[];
}
