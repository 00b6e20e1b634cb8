import { describe, expect, it } from 'vitest';
import { analyseReply, extractReplyText } from './index.ts';

const text = (t: string, from?: string) => extractReplyText({ text: t, from: from ?? null }).text;

describe('extractReplyText: quoted history', () => {
  it.each([
    ['On Mon, Apr 2, 2012 at 6:26 PM, Megan <m@x.com> wrote:'],
    ['On Mon, Aug 26, 2019 at 4:37 PM The Hiring Engine <\na-long-address@example.com> wrote:'],
    ['On Wed, Dec 9, Mister Example\n<mrmister@example.com>\nwrote:'],
    ['Am 01.03.2024 um 10:15 schrieb Max Mustermann <max@example.de>:'],
    ['Le lun. 15 nov. 2021 à 19:42, John - Acme <john@acme.test>\na écrit :'],
    ['El 3 ene 2017, a las 10:35, Ana <ana@example.es> escribió:'],
    ['Il giorno 8 dic 2016, alle ore 10:00, Luca <l@example.it> ha scritto:'],
    ['Em 3 de jan de 2017, às 10:35, João <j@example.br> escreveu:'],
    ['W dniu 2017-01-09 11:59:39 użytkownik Jan <jan@example.pl> napisał:'],
    ['Op 5 dec. 2016 om 17:00 heeft Piet <p@example.nl> het volgende geschreven:'],
    ['Den 5. dec. 2016 kl. 17.00 skrev Per <p@example.dk>:'],
    ['pe 20. lokakuuta 2017 klo 17.50 John Coe\n<j@example.fi> kirjoitti:'],
    ['ср, 30 апр. 2025 г. в 15:19, Иван <ivan@example.ru>:'],
    ['2017-11-24 16:32 GMT+01:00 Baptiste <b@example.com>:'],
    ['-----Original Message-----\nFrom: a@example.com\nSent: Monday\nTo: b@example.com\nSubject: x'],
    ['-----Ursprüngliche Nachricht-----\nVon: Max <m@x.de>\nAn: Erika <e@x.de>\nBetreff: Anfrage'],
    ['________________________________\nFrom: Sender <s@example.com>\nSent: Thursday, September 26, 2019 11:35 AM\nTo: Someone\nSubject: Hi'],
    ['De : Jean <j@example.fr>\nEnvoyé : lundi 5 décembre 2016 17:00\nÀ : moi@example.fr\nObjet : Question'],
    ['Van: Company [mailto:q@example.com]\nVerzonden: maandag 5 december 2016 17:00\nAan: x@example.nl\nOnderwerp: Vraag'],
    ['---------- Forwarded message ---------\nFrom: John <john@example.com>\nDate: Mon, Dec 15, 2024'],
    ['Begin forwarded message:\n\nFrom: John <john@example.com>'],
  ])('cuts at %j', (header) => {
    const r = analyseReply({ text: `Sounds good, see you then.\n\n${header}\n\n> old text\n> more old text\n` });
    expect(r.text).toBe('Sounds good, see you then.');
    expect(r.quoted).toContain('old text');
  });

  it('does not take a URL or a sentence containing "wrote:" for a quote header', () => {
    expect(text('See https://example.com/on-date-someone-wrote-about-parsing for details.\n\nHere is what she wrote:\nnothing')).toContain('nothing');
  });

  it('keeps inline answers interleaved with quotes and drops the quotes', () => {
    const body = [
      'On Dec 15, 2024, at 2:00 PM, Jane Doe <jane@example.com> wrote:',
      "> What's your opinion on option A?",
      '',
      'I think option A is great.',
      '',
      '> What about option B?',
      '',
      'Option B has some drawbacks.',
      '',
    ].join('\n');
    expect(text(body)).toBe('I think option A is great.\n\nOption B has some drawbacks.');
  });

  it('treats a re-wrapped quoted line between two ">" lines as quoted', () => {
    const body = 'Yes.\n\nOn Tue, 1 Mar 2011, Bob <b@x.com> wrote:\n> a very long quoted line that the client\nre-wrapped here\n> and more quote\n';
    expect(text(body)).toBe('Yes.');
  });

  it('"stop" in a quoted footer does not reach the new text', () => {
    const body = 'Thanks, I will have a look next week.\n\nOn Mon, 2 Apr 2012 at 09:00, Rep <rep@vendor.test> wrote:\n> Hi Ann,\n> following up.\n> Reply STOP to unsubscribe.\n';
    const r = extractReplyText({ text: body });
    expect(r.text).not.toMatch(/\bstop\b/i);
    expect(r.quoted).toMatch(/STOP/);
  });

  it('a reply that is only quotes has empty new text', () => {
    expect(text('> just\n> quoted\n')).toBe('');
  });
});

describe('extractReplyText: signatures', () => {
  it('cuts at the "-- " delimiter', () => {
    const r = extractReplyText({ text: 'Hello there\n\n-- \nJane\nAcme Inc.' });
    expect(r).toMatchObject({ text: 'Hello there', signature: '-- \nJane\nAcme Inc.'.replace('-- ', '--') === '' ? '' : expect.stringContaining('Jane') });
  });

  it('"--" inside a line or "----" markdown rules are not signatures', () => {
    expect(text('And here is a fix -- this is not a signature.\n\nkthxbai')).toContain('kthxbai');
    expect(text('Points:\n----\n1. faster\n----\nEnd.')).toContain('End.');
  });

  it.each(['Sent from my iPhone', 'Get Outlook for iOS<https://aka.ms/o0ukef>', 'Envoyé de mon iPhone', 'Gesendet von meinem iPad', 'Enviado desde mi iPhone', 'Verstuurd vanaf mijn iPhone'])(
    'drops the mobile signature %j and the headerless history after it',
    (sig) => {
      const r = extractReplyText({ text: `Works for me.\n\n${sig}\n\nOn the old message, quoted without a header.` });
      expect(r.text).toBe('Works for me.');
      expect(r.signature).toContain(sig.slice(0, 10));
    },
  );

  it('drops a closing phrase with the name and title under it, but not a one-line "Thanks!"', () => {
    expect(text('Hi,\n\nI still have the problem.\n\nRegards,\n\nJohn Doe\nCEO @ Acme !')).toBe('Hi,\n\nI still have the problem.');
    expect(text('Thanks!')).toBe('Thanks!');
    expect(text('Hi,\n\nsounds good.\n\nThanks\nsee you Monday')).toContain('see you Monday');
  });

  it("finds a trailing block with the sender's name when the sender is known", () => {
    const body = 'Can we talk on Tuesday?\n\nGina Smith\ngina@example.com\n(555) 346-9947';
    expect(text(body, 'Gina Smith <gina@example.com>')).toBe('Can we talk on Tuesday?');
    expect(text(body)).toContain('Gina Smith');
    // A sentence naming the sender is not a signature.
    expect(text('Sure.\n\nThanks Gina, that works for us.', 'Gina Smith <gina@example.com>')).toContain('that works');
  });
});

describe('extractReplyText: HTML', () => {
  const cases: Array<[string, string]> = [
    ['gmail_quote', '<div dir="ltr">Yes please.</div><div class="gmail_quote"><div>On Mon, Bob wrote:</div><blockquote class="gmail_quote">old STOP</blockquote></div>'],
    ['blockquote type=cite', '<div>Yes please.</div><div><br></div><p>On Tuesday, April 3, 2012 at 4:55 PM, xxx wrote:</p><blockquote type="cite"><div>old STOP</div></blockquote>'],
    ['divRplyFwdMsg', '<p>Yes please.</p><hr><div id="divRplyFwdMsg"><b>From:</b> Bob<br><b>Sent:</b> Monday</div><div>old STOP</div>'],
    ['OutlookMessageHeader', '<p>Yes please.</p><div class="OutlookMessageHeader">From: Bob</div><p>old STOP</p>'],
    ['moz-cite-prefix', '<p>Yes please.</p><div class="moz-cite-prefix">On 1/2/2020 Bob wrote:<br></div><blockquote type="cite">old STOP</blockquote>'],
    ['yahoo_quoted', '<div>Yes please.</div><div class="yahoo_quoted"><div>On Monday, Bob wrote:</div><div>old STOP</div></div>'],
    ['plain blockquote', '<p>Yes please.</p><p>26.06.2014, 14:41, "Bob" &lt;bob@example.com&gt;:</p><blockquote>old STOP</blockquote>'],
  ];
  it.each(cases)('drops the history marked by %s', (_name, html) => {
    const r = extractReplyText({ html });
    expect(r.text).toBe('Yes please.');
    expect(r.text).not.toMatch(/stop/i);
  });

  it('drops scripts and styles and decodes entities', () => {
    const r = extractReplyText({ html: '<html><head><style>p{color:red}</style></head><body><script>alert(1)</script><p>Caf&eacute; &amp; cr&#232;me &#x263A;</p></body></html>' });
    expect(r.text).toBe('Café & crème ☺');
  });
});

describe('extractReplyText: more clients and languages', () => {
  it.each([
    ['Chinese', 'John <john@example.com> 于2021年11月15日周一 19:42写道：'],
    ['Japanese', '2021年11月15日(月) 19:42 John <john@example.com>:'],
    ['Hungarian', 'John <john@example.com> ezt írta (időpont: 2021. nov. 15., H, 19:42):'],
    ['Polish Gmail', 'pon., 15 lis 2021 o 19:42 John <john@example.com> napisał(a):'],
    ['Spanish Gmail, address in parentheses', 'El lun., 15 nov. 2021 a las 19:42, John (<john@example.com>)\nescribió:'],
    ['German Gmail', 'Am Mo., 15. Nov. 2021 um 19:42 Uhr schrieb John <john@example.com>:'],
    ['Zoho', '---- On Mon, 15 Nov 2021 19:42:00 +0100 John <john@example.com> wrote ----'],
    ['Zimbra', '----- Mail original -----\nDe: "John" <john@example.com>\nÀ: "Ann" <ann@example.fr>'],
    ['Thunderbird', '-------- Original Message --------\nSubject: Re: x\nDate: Mon, 15 Nov 2021'],
    ['Outlook, Czech', 'Od: John <john@example.com>\nOdesláno: pondělí 15. listopadu 2021 19:42\nKomu: Ann\nPředmět: Re: x'],
    ['Outlook, Japanese', '差出人: John <john@example.com>\n送信日時: 2021年11月15日 19:42\n宛先: Ann\n件名: Re: x'],
    ['Outlook, Chinese', '发件人: John <john@example.com>\n发送时间: 2021年11月15日 19:42\n收件人: Ann\n主题: Re: x'],
    ['Outlook, underscores and bold fields', '________________________________________\n*From:* John [mailto:john@example.com]\n*Sent:* Friday, 23 March 2012 5:08 p.m.\n*To:* Ann\n*Subject:* x'],
  ])('%s', (_name, header) => {
    const r = analyseReply({ text: `Sounds good, see you then.\n\n${header}\n\n> old text\n` });
    expect(r.text).toBe('Sounds good, see you then.');
  });

  it('"Sent from my desk, ..." in a sentence is not a mobile signature', () => {
    expect(text('Here is another email\n\nSent from my desk, is much easier then my mobile phone.')).toContain('Sent from my desk');
  });

  it('"One ..." at the start of a line is not "On ... wrote:"', () => {
    expect(text('One outstanding question I had:\n\nDo you have a test?\n\nOn Oct 1, 2012, at 11:55 PM, Dave <d@example.com> wrote:\n\n> old')).toBe(
      'One outstanding question I had:\n\nDo you have a test?',
    );
  });

  it('an inline reply that ends in a further quoted message keeps only the answers', () => {
    const body = [
      'Hi,',
      'On Tue, 2011-03-01 at 18:02 +0530, Abhishek <a@example.com> wrote:',
      '> What is the best way?',
      '',
      'You can list the keys and delete each.',
      '',
      'Cheers',
      '',
      'On 1 Mar 2011, at 12:39, Abhishek <a@example.com> wrote:',
      '',
      'This is older history without quote marks.',
    ].join('\n');
    expect(text(body)).toBe('Hi,\n\nYou can list the keys and delete each.\n\nCheers');
  });
});

describe('extractReplyText: header blocks that do not start with From', () => {
  it.each([
    ['Hotmail', 'Date: Thu, 26 Jun 2014 13:53:45 +0400\nSubject: Test message\nFrom: abc@example.com\nTo: alex@example.com'],
    ['MSN', 'Date: Tue, 6 Dec 2016 10:00:00\nFrom: Bob <bob@example.com>\nTo: ann@example.com\nSubject: x'],
  ])('%s', (_name, header) => {
    expect(text(`Hi. I am fine.\n\n${header}\n\nHello! How are you?`)).toBe('Hi. I am fine.');
  });

  it('a memo-like line in the body is not a header block', () => {
    expect(text('To: all staff, the office is closed on Friday.\n\nThanks')).toContain('office is closed');
    expect(text('Date: tomorrow works for me.\nFrom: my side, all good.')).toContain('all good');
  });
});

describe('extractReplyText: helpdesk and forum markers', () => {
  it.each(['##- Please type your reply above this line -##', '## Please type your reply above this line. ##', '---\n*Previous Replies*'])('%j', (marker) => {
    expect(text(`Thanks, that fixed it.\n\n${marker}\n\nolder discussion`)).toBe('Thanks, that fixed it.');
  });
});

describe('extractReplyText: hostile input the fuzzer found', () => {
  // A regex over the whole document (`<div[^>]*class=…`) backtracked for minutes on this.
  it.each([
    ['a megabyte of "<div class=" without ">"', '<div class='.repeat(100_000)],
    ['a megabyte of "<div class=" with one ">" at the end', `${'<div class='.repeat(100_000)}>`],
    ['a megabyte of "<"', '<'.repeat(1_000_000)],
    ['a megabyte of "=" on one line', '='.repeat(1_000_000)],
    ['a long run of spaces before text', `${' '.repeat(1_000_000)}x`],
    // A closing-phrase regex with two white-space runs in a row hung on this.
    ['a megabyte of spaces', ' '.repeat(1_000_000)],
    ['a megabyte of tabs and spaces after text', `Hi\n${' \t'.repeat(500_000)}`],
  ])('%s stays linear', (_name, input) => {
    const t0 = performance.now();
    extractReplyText({ html: input });
    extractReplyText({ text: input, from: 'Fuzz Sender <fuzz@example.com>' });
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});
