import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiRoutes } from '../routes/index.ts';
import { GENERATED_FILE, generateApiTypes } from './generate.ts';

// `npm run gen:api-types`: writes the web app's API types from the route registry (generate.ts).
const root = join(import.meta.dirname, '..', '..', '..');
writeFileSync(join(root, GENERATED_FILE), generateApiTypes(apiRoutes));
process.stdout.write(`wrote ${GENERATED_FILE}\n`);
