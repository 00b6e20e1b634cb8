import { describe, expect, it } from 'vitest';
import { analyseReply } from './index.ts';

/**
 * Quote headers and signatures as mail clients in several languages write them, each written
 * here from the client's own format: the new text above them is what a reply says.
 */

const NEW = 'Merci, jeudi me convient.';

describe('quote headers in other languages and clients', () => {
  it.each([
    // French webmails (Orange, La Poste, SFR) head the history with "Message du".
    ['Message du : 12/12/2016 13:20\nDe : "Jean Dupont" <jean.dupont@exemple.fr>\nA : rep@cadenza.test\nObjet : Re: Votre offre'],
    ['Message du 12/12/16 13:20\nDe : jean.dupont@exemple.fr\nA : rep@cadenza.test\nCopie à :\nObjet : Votre offre'],
    ['Message du : 12/12/2016 13:20\n> De : "Jean Dupont" <jean.dupont@exemple.fr>\n> Objet : Votre offre'],
    ['==== Le 12/12/2016 à 13:20, Jean Dupont <jean.dupont@exemple.fr> a écrit ===='],
    ['========================\nDe : Jean Dupont <jean.dupont@exemple.fr>\nDate : 12/12/2016 13:20\nObjet : Votre offre'],
    ['=====\nFrom: Dana Kim <dana@example.com>\nSent: Monday, December 12, 2016 1:20 PM\nSubject: Quick question'],
    ['==== Message d\'origine ====\nDe : Jean <jean@exemple.fr>'],
    // German (GMX, web.de), Spanish, Portuguese and Swedish/Danish Outlook blocks.
    ['-------- Original-Nachricht --------\nBetreff: Ihr Angebot\nDatum: 12.12.2016 13:20\nVon: Max Muster <max@beispiel.de>\nAn: rep@cadenza.test'],
    ['De: Juan Pérez <juan@ejemplo.es>\nEnviado el: lunes, 12 de diciembre de 2016 13:20\nPara: rep@cadenza.test\nAsunto: Su propuesta'],
    ['De: João Silva <joao@exemplo.com.br>\nEnviada em: segunda-feira, 12 de dezembro de 2016 13:20\nPara: rep@cadenza.test\nAssunto: Proposta'],
    ['-----Originalmeddelande-----\nFrån: Sven <sven@exempel.se>\nSkickat: den 12 december 2016 13:20\nTill: rep@cadenza.test\nÄmne: Förslag'],
    ['-----Oprindelig meddelelse-----\nFra: Lars <lars@eksempel.dk>\nSendt: 12. december 2016 13:20\nTil: rep@cadenza.test\nEmne: Forslag'],
    // Italian, Polish, Swedish, Portuguese Outlook blocks and attributions.
    ['Da: Mario Rossi <mario@esempio.it>\nInviato: lunedì 12 dicembre 2016 13:20\nA: rep@cadenza.test\nOggetto: Proposta'],
    ['Il giorno lun 12 dic 2016 alle ore 13:20 Mario Rossi <mario@esempio.it> ha scritto:'],
    ['Od: Jan Kowalski <jan@przyklad.pl>\nWysłano: poniedziałek, 12 grudnia 2016 13:20\nDo: rep@cadenza.test\nTemat: Oferta'],
    ['W dniu 12.12.2016 o 13:20, Jan Kowalski <jan@przyklad.pl> pisze:'],
    ['Från: Sven Svensson <sven@exempel.se>\nSkickat: den 12 december 2016 13:20\nTill: rep@cadenza.test\nÄmne: Förslag'],
    ['Den 12 dec. 2016 kl. 13:20 skrev Sven Svensson <sven@exempel.se>:'],
    ['De: João Silva <joao@exemplo.pt>\nEnviado: 12 de dezembro de 2016 13:20\nPara: rep@cadenza.test\nAssunto: Proposta'],
    ['Op ma 12 dec. 2016 om 13:20 schreef Jan de Vries <jan@voorbeeld.nl>:'],
    ['2016年12月12日(月) 13:20 山田太郎 <taro@example.jp>:'],
    // Japanese Apple Mail and Chinese QQ/Foxmail.
    ['2016/12/12 13:20、山田太郎 <taro@example.jp> のメッセージ:'],
    ['-----元のメッセージ-----\n差出人: 山田太郎 <taro@example.jp>\n送信日時: 2016年12月12日 13:20\n宛先: rep@cadenza.test\n件名: ご提案'],
    ['------------------ 原始邮件 ------------------\n发件人: "王伟" <wei@example.cn>\n发送时间: 2016年12月12日(星期一) 下午1:20\n收件人: "rep" <rep@cadenza.test>\n主题: 方案'],
  ])('cuts at %j', (header) => {
    const r = analyseReply({ text: `${NEW}\n\n${header}\n\nTexte de l'ancien message.\nSuite.\n` });
    expect(r.text).toBe(NEW);
    expect(r.quoted).toContain("l'ancien message");
  });
});

describe('mobile signatures', () => {
  it.each([
    ['Sent from TypeApp<http://www.typeapp.com/r?b=12345>'],
    ['Sent from TypeApp <http://www.typeapp.com/r>'],
    ['Get BlueMail for Android'],
    ['Sent from Nine<http://www.9folders.com/>'],
    ['Sent from Yahoo Mail on Android https://go.onelink.me/107872968?pid=InProduct'],
    ['Sent from Proton Mail mobile'],
    ['iPhoneから送信'],
    ['从我的iPhone发送'],
    ['Dana Kim via mobile'],
    ['- Dana (via mobile)'],
  ])('takes %j for the signature', (sig) => {
    const r = analyseReply({ text: `Thursday at 10 works for me.\n\n${sig}\n` });
    expect(r.text).toBe('Thursday at 10 works for me.');
    expect(r.signature).toBe(sig);
    expect(r.withSignature).toBe(`Thursday at 10 works for me.\n\n${sig}`);
  });

  it('does not take a sentence that starts like one for a signature', () => {
    const body = 'Sent from the airport, sorry for the delay: yes, the pilot can start in January.\n\nThanks';
    expect(analyseReply({ text: body }).text).toContain('pilot can start');
    expect(analyseReply({ text: 'I will travel via mobile home next week.\nCall me.' }).text).toContain('Call me.');
  });
});
