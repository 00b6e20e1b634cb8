/**
 * White-label branding of a client workspace: checks of what an agency admin uploads and types.
 * Pure: results, not HTTP (api/ maps them).
 */

/** A colour as #rrggbb, lower-cased; #rgb is widened. */
export function normalColour(raw: string): string | undefined {
  const s = raw.trim().toLowerCase();
  if (/^#[0-9a-f]{6}$/.test(s)) return s;
  const m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(s);
  return m ? `#${m[1]}${m[1]}${m[2]}${m[2]}${m[3]}${m[3]}` : undefined;
}

/** The largest logo kept: a logo is shown at 40 px high; anything bigger is a photo by mistake. */
export const MAX_LOGO_BYTES = 256 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

/**
 * The logo's type read from its first bytes, never from the name or the header the browser
 * sent: SVG is refused (it can carry script, and the logo is served from the app's origin).
 */
export function sniffLogo(bytes: Buffer): { ok: true; type: LogoType } | { ok: false; message: string } {
  if (bytes.length === 0) return { ok: false, message: 'the logo file is empty' };
  if (bytes.length > MAX_LOGO_BYTES) return { ok: false, message: `the logo is ${Math.ceil(bytes.length / 1024)} KB; at most ${MAX_LOGO_BYTES / 1024} KB` };
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { ok: true, type: 'image/png' };
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { ok: true, type: 'image/jpeg' };
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return { ok: true, type: 'image/webp' };
  return { ok: false, message: 'the logo must be a PNG, JPEG or WebP image' };
}

/** The contrast ratio of two colours (WCAG 2), so a form can warn of unreadable white text on the primary colour. */
export function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}
