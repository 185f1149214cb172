import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const server = process.env.DEV_SERVER_URL ?? 'http://localhost:3000';

/** The browser app: `web/` is the root, built to web/dist (served by express); `npm run dev` proxies the API. */
export default defineConfig({
  root: 'web',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1500 },
  server: {
    port: Number(process.env.WEB_DEV_PORT ?? 5173),
    proxy: {
      '/api': server,
      '/healthz': server,
      '/socket.io': { target: server, ws: true },
    },
  },
});
