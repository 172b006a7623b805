// Bundles the web table (src/main.ts, on @president/client (clients/typescript) and
// the DEAL.md library of public/lib/) into public/bundle/table.js with esbuild.
// `make web-build` runs it after building the package, `npm ci` and tsc, then writes the manifest.

import { build } from "esbuild";

await build({
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: true,
  sourcemap: false,
  legalComments: "none",
  outfile: "public/bundle/table.js",
  logLevel: "warning",
});
