import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { EditorContent, getMarkRange, useEditor, type Editor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { htmlToText } from '../../../src/common/email-html.ts';
import { api, errorMessage, ws } from '../api.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { LinkDialog } from './LinkDialog.tsx';

/**
 * The email editor (issue 19; docs/web.md "The email editor"): rich text (tiptap on ProseMirror)
 * with its plain-text alternative beside it, made from the HTML by the very function the server
 * uses (common/email-html.ts htmlToText) until the rep edits it; variables from a menu; the
 * workspace's template library (insert, save, rename, delete); links set, changed or removed in
 * a dialog that checks the address (LinkDialog.tsx). The server sanitizes the HTML before it
 * stores it.
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

/**
 * Puts content where the rep's caret was: tiptap keeps the selection in its state while a menu has
 * the focus. An editor never focused has its selection at the very start, which nobody means:
 * there the content goes at the end.
 */
function insertAtCaret(editor: Editor, touched: boolean, content: string): void {
  editor.chain().focus(touched ? null : 'end').insertContent(content).run();
}

/** What the Link dialog opens on: the link at the caret (if any) and the text it wraps. */
interface LinkTarget {
  current: string;
  text: string;
}

function linkTarget(editor: Editor): LinkTarget {
  const current = editor.isActive('link') ? String(editor.getAttributes('link').href ?? '') : '';
  const { from, to, $from } = editor.state.selection;
  // The caret inside a link: the whole link is what it wraps (extendMarkRange, as applying does).
  const range = current ? getMarkRange($from, editor.schema.marks.link!) : undefined;
  return { current, text: editor.state.doc.textBetween(range?.from ?? from, range?.to ?? to, ' ') };
}

/**
 * The link set on the selection, or, on an empty one, the address inserted as its own linked text
 * (an email address without its mailto:); on a link at the caret, its address changed.
 */
function applyLink(editor: Editor, href: string): void {
  if (editor.isActive('link')) editor.chain().focus().extendMarkRange('link').setLink({ href }).run();
  else if (editor.state.selection.empty) editor.chain().focus().insertContent({ type: 'text', text: href.replace(/^mailto:/i, ''), marks: [{ type: 'link', attrs: { href } }] }).run();
  else editor.chain().focus().setLink({ href }).run();
}

/**
 * A menu button (WAI-ARIA menu pattern): the menu opens on a press, the arrows move among its
 * items, Enter or a click picks one, Escape closes it and gives the focus back. A <select> is no
 * menu: in Chromium the first arrow key on a closed one picks its first option at once, and the
 * insertion then took the focus away, so a keyboard user could only ever insert the first variable.
 */
function InsertMenu({ label, items, onPick }: { label: string; items: ReadonlyArray<readonly [string, string]>; onPick: (value: string) => void }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);
  const itemsOf = () => Array.from(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? []);
  useEffect(() => {
    if (open) itemsOf()[0]?.focus();
  }, [open]);
  const onKeyDown = (e: KeyboardEvent) => {
    const all = itemsOf();
    const i = all.indexOf(document.activeElement as HTMLButtonElement);
    const go = (n: number) => (e.preventDefault(), all[(n + all.length) % all.length]?.focus());
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(all.length - 1);
    else if (e.key === 'Escape' || e.key === 'Tab') {
      if (e.key === 'Escape') e.preventDefault();
      setOpen(false);
      button.current?.focus();
    }
  };
  return (
    <div className="insert-menu">
      <button ref={button} type="button" className="btn btn-quiet" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>
        {label}
      </button>
      {open && (
        <ul
          ref={menu}
          role="menu"
          aria-label={label}
          className="insert-menu-list"
          onKeyDown={onKeyDown}
          // A press or a focus elsewhere closes it (its own button toggles it on its click).
          onBlur={(e) => !menu.current?.contains(e.relatedTarget as Node | null) && e.relatedTarget !== button.current && setOpen(false)}
        >
          {items.map(([name, value]) => (
            <li key={value} role="none">
              <button type="button" role="menuitem" tabIndex={-1} onClick={() => (setOpen(false), onPick(value))}>
                {name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function EmailEditor({
  name,
  label,
  workspaceId,
  value,
  onChange,
  onFocus,
}: {
  name: string;
  label: string;
  workspaceId?: string | undefined;
  value: EmailValue;
  onChange: (v: Partial<EmailValue>) => void;
  /** The rich text or the plain text took the focus (the sequence editor previews that variant). */
  onFocus?: () => void;
}) {
  // The text is the rep's own once it differs from what the HTML gives.
  const generated = value.html ? htmlToText(value.html) : '';
  const [ownText, setOwnText] = useState(value.html !== '' && value.body !== generated);
  const touched = useRef(false);
  // More of the value to change with the next update (an inserted template's subject): the
  // parent's state is merged per call, so two calls in one event would lose the first.
  const withNextUpdate = useRef<Partial<EmailValue>>({});
  const [link, setLink] = useState<LinkTarget>();
  // Ctrl/Cmd+K opens the Link dialog from the text, as in mail clients (the handler is set before the editor exists).
  const openLink = useRef<() => void>(() => undefined);
  const editor = useEditor({
    // The app's CSP allows no inline style: tiptap's injected <style> would be refused (a page error).
    injectCSS: false,
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    content: value.html || (value.body ? value.body.split(/\n{2,}/).map((p) => `<p>${p.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n/g, '<br>')}</p>`).join('') : ''),
    editorProps: {
      attributes: { 'aria-label': `Formatted text of ${name}`, role: 'textbox', 'aria-multiline': 'true', 'aria-keyshortcuts': 'Control+K', class: 'rich-text' },
      handleKeyDown: (_view, e) => {
        if (e.key.toLowerCase() !== 'k' || !(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return false;
        openLink.current();
        return true;
      },
    },
    onFocus: () => {
      touched.current = true;
      onFocus?.();
    },
    onUpdate: ({ editor: e }) => {
      const html = e.getHTML();
      const more = withNextUpdate.current;
      withNextUpdate.current = {};
      onChange(ownText ? { ...more, html } : { ...more, html, body: htmlToText(html) });
    },
  });
  if (!editor) return null;
  openLink.current = () => setLink(linkTarget(editor));
  const tool = (toolName: string, active: boolean, run: () => void) => (
    // A press keeps the focus in the text (no mousedown focus on the button): tiptap gives it back
    // only at the next animation frame, and a key typed before then was lost.
    <button type="button" className="btn btn-quiet" aria-pressed={active} onMouseDown={(e) => e.preventDefault()} onClick={run}>
      {toolName}
    </button>
  );
  return (
    <div className="stack" role="group" aria-label={`Email editor of ${name}`}>
      <div className="row" role="toolbar" aria-label={`Formatting of ${name}`}>
        {tool('Bold', editor.isActive('bold'), () => editor.chain().focus().toggleBold().run())}
        {tool('Italic', editor.isActive('italic'), () => editor.chain().focus().toggleItalic().run())}
        {tool('Bulleted list', editor.isActive('bulletList'), () => editor.chain().focus().toggleBulletList().run())}
        {tool('Link', editor.isActive('link'), () => openLink.current())}
        <InsertMenu label={`Insert variable into ${name}`} items={VARIABLES} onPick={(v) => insertAtCaret(editor, touched.current, v)} />
      </div>
      <EditorContent editor={editor} />
      {link && (
        <LinkDialog
          name={name}
          current={link.current}
          text={link.text}
          onApply={(href) => applyLink(editor, href)}
          onRemove={() => editor.chain().focus().extendMarkRange('link').unsetLink().run()}
          // Back into the text with its selection, however it closed: the browser's own focus return
          // gives the text the focus without the selection ProseMirror holds, and tiptap's focus
          // command does nothing in a text that has the focus; the view's focus() writes it back.
          onClose={() => (setLink(undefined), editor.view.focus())}
        />
      )}
      <Field label={label} hint={ownText ? 'Your own text, sent as the plain-text alternative.' : 'Made from the formatted text; edit it to write your own.'}>
        <textarea rows={5} value={ownText ? value.body : generated || value.body} onFocus={onFocus} onChange={(e) => (setOwnText(true), onChange({ body: e.target.value }))} />
      </Field>
      {ownText && (
        <div>
          <button type="button" className="btn btn-quiet" onClick={() => (setOwnText(false), onChange({ body: htmlToText(value.html) }))}>
            Use the text made from the formatting
          </button>
        </div>
      )}
      {workspaceId && <TemplateLibrary workspaceId={workspaceId} name={name} value={value} ownText={ownText} onInsert={(t) => {
        if (!value.subject && t.subject) withNextUpdate.current = { subject: t.subject };
        insertAtCaret(editor, touched.current, t.html || t.text);
      }} />}
    </div>
  );
}

/**
 * The workspace's templates, behind a disclosure under the editor: insert one at the caret, save
 * this email as one, rename or delete one. The list is read when the library is opened.
 */
function TemplateLibrary({ workspaceId, name, value, ownText, onInsert }: { workspaceId: string; name: string; value: EmailValue; ownText: boolean; onInsert: (t: Template) => void }) {
  const [open, setOpen] = useState(false);
  const [templates, setTemplates] = useState<Template[]>([]);
  const [newName, setNewName] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; name: string }>();
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<string>();
  const load = () => api<{ templates: Template[] }>('GET', ws(workspaceId, 'email-templates')).then((r) => setTemplates(r.templates), (e: unknown) => setError(errorMessage(e)));
  const act = async (done: string, call: () => Promise<unknown>) => {
    setError(undefined);
    setNote(undefined);
    try {
      await call();
      setNote(done);
      await load();
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  const save = async () => {
    const n = newName.trim();
    if (await act(`Saved as template "${n}".`, () => api('POST', ws(workspaceId, 'email-templates'), { name: n, subject: value.subject, html: value.html, text: ownText ? value.body : '' }))) setNewName('');
  };
  const rename = async () => {
    if (renaming && (await act(`Renamed to "${renaming.name.trim()}".`, () => api('PATCH', ws(workspaceId, `email-templates/${renaming.id}`), { name: renaming.name })))) setRenaming(undefined);
  };
  const { ask, dialog } = useConfirm();
  const remove = async (t: Template) => {
    if (await ask({ title: `Delete the template "${t.name}"?`, body: 'Emails it was inserted into keep their text.', action: 'Delete template' })) await act(`Deleted the template "${t.name}".`, () => api('DELETE', ws(workspaceId, `email-templates/${t.id}`)));
  };
  return (
    <div className="stack">
      {dialog}
      <div>
        <button type="button" className="btn btn-quiet" aria-expanded={open} onClick={() => (open || void load(), setOpen(!open), setNote(undefined))}>
          Templates for {name}
        </button>
      </div>
      {open && (
        <section className="stack template-library" aria-label={`Templates for ${name}`}>
          {templates.length === 0 ? (
            <p className="muted">No templates yet: save this email as the first.</p>
          ) : (
            <ul className="template-list">
              {templates.map((t) => (
                <li key={t.id} className="row">
                  {renaming?.id === t.id ? (
                    <>
                      <Field label={`New name of ${t.name}`}>
                        <input value={renaming.name} onChange={(e) => setRenaming({ id: t.id, name: e.target.value })} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), void rename())} />
                      </Field>
                      <button type="button" className="btn" onClick={() => void rename()}>
                        Save name
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => setRenaming(undefined)}>
                        Cancel
                      </button>
                    </>
                  ) : (
                    <>
                      <span className="template-name">{t.name}</span>
                      <button type="button" className="btn" onClick={() => (onInsert(t), setNote(`Inserted "${t.name}".`))} aria-label={`Insert template ${t.name}`}>
                        Insert
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => setRenaming({ id: t.id, name: t.name })} aria-label={`Rename template ${t.name}`}>
                        Rename
                      </button>
                      <button type="button" className="btn btn-quiet" onClick={() => void remove(t)} aria-label={`Delete template ${t.name}`}>
                        Delete
                      </button>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
          <div className="row">
            <Field label={`Template name for ${name}`}>
              <input value={newName} onChange={(e) => setNewName(e.target.value)} />
            </Field>
            <button type="button" className="btn" onClick={() => void save()}>
              Save as template
            </button>
          </div>
          {note && <p role="status">{note}</p>}
          <ErrorNote error={error} />
        </section>
      )}
    </div>
  );
}
