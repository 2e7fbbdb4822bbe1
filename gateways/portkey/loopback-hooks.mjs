// ESM resolve hook: every import of "@hono/node-server" except the shim's own resolves to loopback-serve.mjs.
const SHIM = new URL("./loopback-serve.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === "@hono/node-server" && context.parentURL !== SHIM) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
