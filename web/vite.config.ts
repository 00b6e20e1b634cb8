import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into dist/web at `npm install` time (package.json postinstall) and served by the API
// server on the same port (src/api/static.ts), so the app and the API share one origin and the
// session cookie needs no CORS.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
  },
  server: {
    // `npm run dev:web`: Vite serves the app and forwards the API to a running `npm start`.
    proxy: { '/api': 'http://127.0.0.1:8080', '/openapi.json': 'http://127.0.0.1:8080' },
  },
});
