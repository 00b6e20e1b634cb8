import { useEffect, useState } from 'react';
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { htmlToText } from '../../../src/common/email-html.ts';
import { api, errorMessage, ws } from '../api.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';

/**
 * The email editor (issue 19; docs/web.md "The email editor"): rich text (tiptap on ProseMirror)
 * with its plain-text alternative beside it, made from the HTML by the very function the server
 * uses (common/email-html.ts htmlToText) until the rep edits it; variables from a menu; the
 * workspace's templates inserted or saved. The server sanitizes the HTML before it stores it.
 */

/** The renderer's lead fields (sequence/template/variables.ts), each with a fallback where a lead may lack it. */
const VARIABLES = [
  ['First name', '{{first_name | default: "there"}}'],
  ['Last name', '{{last_name}}'],
  ['Full name', '{{full_name}}'],
  ['Company', '{{company | default: "your team"}}'],
  ['Title', '{{title}}'],
  ['Email', '{{email}}'],
  ['Country', '{{country}}'],
  ['Sender name', '{{sender.name}}'],
  ['Sender first name', '{{sender.first_name}}'],
  ['Unsubscribe link', '{{unsubscribe_url}}'],
] as const;

interface Template {
  id: string;
  name: string;
  subject: string;
  html: string;
  text: string;
}

export interface EmailValue {
  subject: string;
  body: string;
  html: string;
}

export function EmailEditor({ name, label, workspaceId, value, onChange }: { name: string; label: string; workspaceId?: string | undefined; value: EmailValue; onChange: (v: Partial<EmailValue>) => void }) {
  // The text is the rep's own once it differs from what the HTML gives.
  const generated = value.html ? htmlToText(value.html) : '';
  const [ownText, setOwnText] = useState(value.html !== '' && value.body !== generated);
  const editor = useEditor({
    // The app's CSP allows no inline style: tiptap's injected <style> would be refused (a page error).
    injectCSS: false,
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    content: value.html || (value.body ? value.body.split(/\n{2,}/).map((p) => `<p>${p.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n/g, '<br>')}</p>`).join('') : ''),
    editorProps: { attributes: { 'aria-label': `Formatted text of ${name}`, role: 'textbox', 'aria-multiline': 'true', class: 'rich-text' } },
    onUpdate: ({ editor: e }) => {
      const html = e.getHTML();
      onChange(ownText ? { html } : { html, body: htmlToText(html) });
    },
  });
  const [templates, setTemplates] = useState<Template[]>([]);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const load = () => {
    if (workspaceId) api<{ templates: Template[] }>('GET', ws(workspaceId, 'email-templates')).then((r) => setTemplates(r.templates), (e: unknown) => setError(errorMessage(e)));
  };
  useEffect(load, [workspaceId]);
  if (!editor) return null;
  const insertTemplate = (t: Template) => {
    editor.chain().focus().insertContent(t.html || t.text).run();
    if (!value.subject && t.subject) onChange({ subject: t.subject });
  };
  const saveTemplate = async () => {
    const name = window.prompt('Template name');
    if (!name || !workspaceId) return;
    try {
      await api('POST', ws(workspaceId, 'email-templates'), { name, subject: value.subject, html: value.html, text: ownText ? value.body : '' });
      setSaved(`Saved as template "${name}".`);
      load();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const tool = (name: string, active: boolean, run: () => void) => (
    <button type="button" className="btn btn-quiet" aria-pressed={active} onClick={run}>
      {name}
    </button>
  );
  return (
    <div className="stack" role="group" aria-label={`Email editor of ${name}`}>
      <div className="row" role="toolbar" aria-label={`Formatting of ${name}`}>
        {tool('Bold', editor.isActive('bold'), () => editor.chain().focus().toggleBold().run())}
        {tool('Italic', editor.isActive('italic'), () => editor.chain().focus().toggleItalic().run())}
        {tool('Bulleted list', editor.isActive('bulletList'), () => editor.chain().focus().toggleBulletList().run())}
        {tool('Link', editor.isActive('link'), () => {
          const href = window.prompt('Link address (https://…)');
          if (href) editor.chain().focus().setLink({ href }).run();
        })}
        <Field label={`Variable for ${name}`}>
          <select value="" onChange={(e) => e.target.value && editor.chain().focus().insertContent(e.target.value).run()}>
            <option value="">Insert variable…</option>
            {VARIABLES.map(([name, v]) => (
              <option key={v} value={v}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        {workspaceId && (
          <Field label={`Template for ${name}`}>
            <select value="" onChange={(e) => { const t = templates.find((x) => x.id === e.target.value); if (t) insertTemplate(t); }}>
              <option value="">Insert template…</option>
              {templates.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        {workspaceId && (
          <button type="button" className="btn btn-quiet" onClick={saveTemplate}>
            Save as template
          </button>
        )}
      </div>
      <EditorContent editor={editor} />
      <Field label={label} hint={ownText ? 'Your own text, sent as the plain-text alternative.' : 'Made from the formatted text; edit it to write your own.'}>
        <textarea rows={5} value={ownText ? value.body : generated || value.body} onChange={(e) => (setOwnText(true), onChange({ body: e.target.value }))} />
      </Field>
      {ownText && (
        <div>
          <button type="button" className="btn btn-quiet" onClick={() => (setOwnText(false), onChange({ body: htmlToText(value.html) }))}>
            Use the text made from the formatting
          </button>
        </div>
      )}
      {saved && <p role="status">{saved}</p>}
      <ErrorNote error={error} />
    </div>
  );
}
