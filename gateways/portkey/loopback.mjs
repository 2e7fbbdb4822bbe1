// Portkey's server binds every interface and has no host option. Started as
//   node --import ./loopback.mjs node_modules/@portkey-ai/gateway/build/start-server.js --port=N --headless
// it listens on 127.0.0.1 only: the resolve hook below hands the gateway loopback-serve.mjs for @hono/node-server.
import { register } from "node:module";

register("./loopback-hooks.mjs", import.meta.url);
