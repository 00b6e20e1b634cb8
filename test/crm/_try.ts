import { benchStore } from '../../bench/support/backends.ts';
import { runCrmSoak } from './soak.ts';
const kind = (process.argv[2] ?? 'hubspot') as 'hubspot';
const n = Number(process.argv[3] ?? 2000);
const s = await benchStore((process.argv[4] ?? 'postgres') as 'postgres');
try {
  const r = await runCrmSoak({ store: s.store, kind, activities: n });
  console.log(JSON.stringify(r));
} finally { await s.drop(); }
