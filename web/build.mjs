// Bundles the web table (src/main.ts, with the code generated from protos/ into gen/ and
// the DEAL.md library of public/lib/) into public/bundle/table.js with esbuild.
// `make web-build` runs it after `npm ci` and the code generation, then writes the manifest.

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
