import { useRef, useState, type ReactNode } from 'react';
import { Field } from './parts.tsx';

/**
 * A value to pass on by hand (an invitation link, a signing secret): a labelled read-only field and
 * a Copy button; `children` are more buttons for the same row.
 */
export function CopyField({ label, value, copyLabel, children }: { label: string; value: string; copyLabel: string; children?: ReactNode }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // No clipboard (plain http on another host): select it, so Ctrl+C does it.
      input.current?.select();
      document.execCommand('copy');
    }
    setCopied(true);
  };
  return (
    <div className="row">
      <Field label={label}>
        <input ref={input} readOnly value={value} onFocus={(e) => e.target.select()} className="input-wide" />
      </Field>
      <button type="button" className="btn" onClick={() => void copy()} style={{ alignSelf: 'flex-end' }}>
        {copied ? 'Copied' : copyLabel}
      </button>
      {children}
    </div>
  );
}
